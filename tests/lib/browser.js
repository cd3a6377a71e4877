// Drives headless Chromium (Debian's, via playwright-core) for the tests and
// the flamegraph screenshot.  Source tests/lib/browser.sh for the set-up.
//
//   node browser.js page BASE_URL SECONDS [PNG]
//       Loads profd's page, takes a CPU flamegraph of SECONDS, clicks the
//       widest user frame that is not a root (of those named $ZOOM_FRAME if
//       set) to zoom, resets, searches, tries the heap form.  Prints one
//       JSON object of what the DOM showed.
//   node browser.js kinds BASE_URL SECONDS [SPLIT]
//       Loads profd's page and takes, with its first form, an off-CPU and
//       then a wall-clock flamegraph of SECONDS each (split by SPLIT if
//       given).  Prints {offcpu: {...}, wall: {...}}: the status line, the
//       links, whether the frequency was disabled, every frame's title.
//   node browser.js hostile SVG NAMES
//       Opens an SVG whose frames have hostile names (NAMES: a file, one a
//       line), hovers, zooms and searches each, and prints the names the DOM
//       shows and whatever the names managed to run (window.pwned).
//   node browser.js render SVG
//       Opens an SVG file and prints {"ms": time to load and first paint}.
//   node browser.js screenshot SVG PNG
//       Saves a PNG of the SVG as the browser renders it.
'use strict';
const { chromium } = require('playwright-core');

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	'--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function launch() {
	return chromium.launchPersistentContext(process.env.BROWSER_PROFILE_DIR, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ARGS,
		headless: true,
		viewport: { width: 1280, height: 900 },
	});
}

// The SVG's geometry as its script keeps it: frames[] of {name, kind, x, w}.
function svgFrames() {
	return window.flamegraph.frames.map(function (f) {
		return {
			name: f.name, kind: f.g.getAttribute('class').split(' ')[0],
			x: f.x, w: f.w, width: +f.rect.getAttribute('width'),
			hidden: f.g.classList.contains('hide'),
		};
	});
}

async function page(base, seconds, png) {
	const ctx = await launch();
	const out = {};
	try {
		const p = ctx.pages()[0] || await ctx.newPage();
		const errors = [];
		p.on('pageerror', (e) => errors.push(String(e)));
		await p.goto(base + '/');
		await p.waitForFunction(() => !/…|not answering/.test(document.getElementById('targets').textContent));
		out.targets = await p.textContent('#targets');
		out.title = await p.title();
		await p.fill('#cpu-form input[name=seconds]', String(seconds));
		await p.click('#cpu-form button');
		// While it profiles, the sessions table shows the session.
		await p.waitForSelector('#sessions tbody tr', { timeout: 10000 });
		out.session_row = await p.textContent('#sessions tbody tr');
		await p.waitForSelector('#graph:not([hidden])', { timeout: (seconds + 30) * 1000 });
		out.status = await p.textContent('#status');
		out.links = await p.$$eval('#links a', (as) => as.map((a) => a.textContent + ' ' + a.getAttribute('href')));
		const frame = await (await p.$('#graph')).contentFrame();
		await frame.waitForFunction(() => window.flamegraph && window.flamegraph.frames.length > 0);
		const before = await frame.evaluate(svgFrames);
		out.frames = before.length;
		out.full = before.find((f) => f.kind === 'a').w;
		// Zoom into the widest user frame named ZOOM_FRAME, or else the
		// widest that doesn't span everything.
		const widest = (fs) => fs.filter((f) => f.kind === 'u' && f.w < out.full - 1)
			.sort((a, b) => b.w - a.w)[0];
		const target = (process.env.ZOOM_FRAME &&
				widest(before.filter((f) => f.name === process.env.ZOOM_FRAME))) || widest(before);
		out.clicked = { name: target.name, w: target.w };
		out.unzoom_visible_before = await frame.isVisible('.unzoom');
		const idx = before.indexOf(target);
		await frame.locator('.frames > g').nth(idx).locator('rect').click();
		const after = await frame.evaluate(svgFrames);
		out.clicked_width_after = after[idx].width;
		out.unzoom_visible_after = await frame.isVisible('.unzoom');
		out.hidden_after = after.filter((f) => f.hidden).length;
		out.details = await frame.textContent('.details');
		if (png)
			await p.screenshot({ path: png, fullPage: true });
		await frame.click('.unzoom');
		const reset = await frame.evaluate(svgFrames);
		out.clicked_width_reset = reset[idx].width;
		out.unzoom_visible_reset = await frame.isVisible('.unzoom');
		out.search_pct = await frame.evaluate((n) => window.flamegraph.search(n), target.name);
		// What the search should cover: every frame whose name holds the
		// clicked one's, wherever its tower stands (a sample whose walk
		// ended elsewhere under main puts the function in a second tower),
		// a frame inside another counted once.
		let end = -Infinity;
		out.search_expected = 0;
		before.filter((f) => f.kind !== 'a' && f.name.includes(target.name))
			.sort((a, b) => a.x - b.x).forEach((f) => {
				const from = Math.max(f.x, end), to = f.x + f.w;
				if (to > from) {
					out.search_expected += to - from;
					end = to;
				}
			});
		out.matched = await frame.textContent('.matched');
		// Heap: a flamegraph, or the JSON error shown as it came.
		await p.click('#heap-form button');
		await p.waitForFunction(() => !document.querySelector('#heap-form button').disabled,
			null, { timeout: 60000 });
		out.heap_status = await p.textContent('#status');
		out.heap_error = (await p.getAttribute('#status', 'class')) === 'error';
		out.page_errors = errors;
	} finally {
		await ctx.close();
	}
	return out;
}

async function kinds(base, seconds, split) {
	const ctx = await launch();
	const out = { page_errors: [] };
	try {
		const p = ctx.pages()[0] || await ctx.newPage();
		p.on('pageerror', (e) => out.page_errors.push(String(e)));
		await p.goto(base + '/');
		await p.waitForFunction(() => !/…|not answering/.test(document.getElementById('targets').textContent));
		for (const kind of ['offcpu', 'wall']) {
			const r = {};
			await p.selectOption('#cpu-form select[name=kind]', kind);
			r.frequency_disabled = await p.isDisabled('#cpu-form input[name=frequency]');
			await p.fill('#cpu-form input[name=seconds]', String(seconds));
			if (split)
				await p.selectOption('#cpu-form select[name=split]', split);
			await p.click('#cpu-form button');
			await p.waitForFunction(() => document.querySelector('#cpu-form button').disabled,
				null, { timeout: 10000 }).catch(() => {});
			await p.waitForFunction(() => !document.querySelector('#cpu-form button').disabled,
				null, { timeout: (seconds + 60) * 1000 });
			r.status = await p.textContent('#status');
			r.error = (await p.getAttribute('#status', 'class')) === 'error';
			r.links = await p.$$eval('#links a', (as) => as.map((a) => a.textContent + ' ' + a.getAttribute('href')));
			if (!r.error) {
				const frame = await (await p.$('#graph')).contentFrame();
				await frame.waitForFunction(() => window.flamegraph && window.flamegraph.frames.length > 0);
				r.titles = await frame.evaluate(() => window.flamegraph.frames.map((f) => f.title));
				r.subtitle = await frame.textContent('.sub');
			}
			out[kind] = r;
		}
	} finally {
		await ctx.close();
	}
	return out;
}

async function hostile(svg, namesFile) {
	const ctx = await launch();
	const names = require('fs').readFileSync(namesFile, 'utf8').split('\n').filter((n) => n);
	try {
		const p = ctx.pages()[0] || await ctx.newPage();
		const errors = [];
		p.on('pageerror', (e) => errors.push(String(e)));
		p.on('dialog', (d) => d.dismiss());
		await p.goto('file://' + require('path').resolve(svg), { waitUntil: 'load' });
		const frames = await p.evaluate(svgFrames);
		for (const name of names) {
			const idx = frames.findIndex((f) => f.name === name);
			if (idx < 0)
				continue;
			const rect = p.locator('.frames > g').nth(idx).locator('rect');
			await p.evaluate(() => window.flamegraph.unzoom());
			await rect.hover();
			await rect.click();
			await p.evaluate((n) => window.flamegraph.search(n), name);
		}
		return {
			dom_names: frames.map((f) => f.name),
			title: await p.textContent('.title'),
			details: await p.textContent('.details'),
			scripts: await p.evaluate(() => document.querySelectorAll('script').length),
			pwned: await p.evaluate(() => window.pwned === undefined ? null : String(window.pwned)),
			errors: errors,
		};
	} finally {
		await ctx.close();
	}
}

async function render(svg) {
	const ctx = await launch();
	try {
		const p = ctx.pages()[0] || await ctx.newPage();
		await p.goto('about:blank');
		const t0 = Date.now();
		await p.goto('file://' + require('path').resolve(svg), { waitUntil: 'load' });
		// Two animation frames after load: layout and paint are done.
		await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
		const ms = Date.now() - t0;
		const nav = await p.evaluate(() => {
			const e = performance.getEntriesByType('navigation')[0];
			return { load_event_ms: e.loadEventEnd, frames: window.flamegraph.frames.length };
		});
		return Object.assign({ ms: ms }, nav);
	} finally {
		await ctx.close();
	}
}

async function screenshot(svg, png) {
	const ctx = await launch();
	try {
		const p = ctx.pages()[0] || await ctx.newPage();
		await p.goto('file://' + require('path').resolve(svg), { waitUntil: 'load' });
		const size = await p.evaluate(() => {
			const s = document.documentElement;
			return { width: +s.getAttribute('width'), height: +s.getAttribute('height') };
		});
		await p.setViewportSize(size);
		await p.screenshot({ path: png });
		return size;
	} finally {
		await ctx.close();
	}
}

(async () => {
	const [mode, a, b, c] = process.argv.slice(2);
	let out;
	if (mode === 'page')
		out = await page(a, +b, c);
	else if (mode === 'kinds')
		out = await kinds(a, +b, c);
	else if (mode === 'hostile')
		out = await hostile(a, b);
	else if (mode === 'render')
		out = await render(a);
	else if (mode === 'screenshot')
		out = await screenshot(a, b);
	else
		throw new Error('usage: browser.js page|kinds|hostile|render|screenshot ...');
	console.log(JSON.stringify(out));
})().catch((e) => {
	console.error(e);
	process.exit(1);
});
