// flamegraph.js: hover, zoom and search for profd's SVG flame graphs.
// Compiled into profd (render/flamegraph.c) and embedded at the end of each
// SVG.  Names are read back from each frame's <title> and only ever written
// with textContent: nothing from the profile is evaluated.
'use strict';
(function () {
	var script = document.currentScript;
	var svg = script ? script.parentNode : document.documentElement;
	var NS = 'http://www.w3.org/2000/svg';
	// As in flamegraph.c: side padding, Verdana's average glyph width at
	// 12 px, the fewest characters worth a label.
	var PAD = 10, CHAR_W = 12 * 0.59, MIN_CHARS = 3, EPS = 0.25;
	var FULL = +svg.getAttribute('width') - 2 * PAD;
	var HIT = 'rgb(230,0,230)';
	function q(sel) { return svg.querySelector(sel); }
	var details = q('.details'), matched = q('.matched');
	var unzoomBtn = q('.unzoom'), searchBtn = q('.search');
	var frames = [], byG = new Map(), all = null, searching = false;

	Array.prototype.forEach.call(q('.frames').children, function (g) {
		var rect = g.querySelector('rect'), title = g.querySelector('title').textContent;
		var f = {
			g: g, rect: rect, text: g.querySelector('text'), title: title,
			name: title.slice(0, title.lastIndexOf(' (')),
			x: +rect.getAttribute('x'), w: +rect.getAttribute('width'),
			y: +rect.getAttribute('y'), fill: rect.getAttribute('fill'),
		};
		frames.push(f);
		byG.set(g, f);
		if (g.classList.contains('a'))
			all = f;
	});

	// Draw f at x with width w, and fit its label as flamegraph.c does.
	function place(f, x, w) {
		var fit = Math.floor((w - 6) / CHAR_W), label = '';
		f.rect.setAttribute('x', x.toFixed(1));
		f.rect.setAttribute('width', w.toFixed(1));
		if (fit >= MIN_CHARS)
			label = f.name.length <= fit ? f.name : f.name.slice(0, fit - 2) + '..';
		if (!f.text) {
			if (!label)
				return;
			f.text = document.createElementNS(NS, 'text');
			f.text.setAttribute('y', f.y + 12);
			f.g.appendChild(f.text);
		}
		f.text.setAttribute('x', (x + 3).toFixed(1));
		f.text.textContent = label;
	}

	// Zoom into f: it and its descendants span the width, its ancestors
	// stay (faded) below it, and everything else hides.  Frames are placed
	// by their original geometry, kept in frames[], so zooms compose.
	function zoom(f) {
		var scale = FULL / f.w;
		if (f === all)
			return unzoom();
		unzoomBtn.classList.remove('hide');
		frames.forEach(function (o) {
			var cls = o.g.classList;
			if (o.y > f.y && o.x <= f.x + EPS && o.x + o.w >= f.x + f.w - EPS) {
				cls.remove('hide');
				cls.add('par');
				place(o, PAD, FULL);
			} else if (o.y <= f.y && o.x >= f.x - EPS && o.x + o.w <= f.x + f.w + EPS) {
				cls.remove('hide', 'par');
				place(o, PAD + (o.x - f.x) * scale, o.w * scale);
			} else {
				cls.add('hide');
			}
		});
	}

	function unzoom() {
		unzoomBtn.classList.add('hide');
		frames.forEach(function (o) {
			o.g.classList.remove('hide', 'par');
			place(o, o.x, o.w);
		});
	}

	// Highlight the frames whose name matches term (a regular expression,
	// or literal text if it isn't one) and show their share of the total.
	function search(term) {
		var re, hits = [], sum = 0, end = -Infinity;
		frames.forEach(function (o) { o.rect.setAttribute('fill', o.fill); });
		searching = !!term;
		searchBtn.textContent = searching ? 'Reset Search' : 'Search';
		matched.textContent = ' ';
		if (!searching)
			return null;
		try {
			re = new RegExp(term);
		} catch (e) {
			re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
		}
		frames.forEach(function (o) {
			if (o !== all && re.test(o.name)) {
				o.rect.setAttribute('fill', HIT);
				hits.push(o);
			}
		});
		// A match inside a match is the same time: sum the union of spans.
		hits.sort(function (a, b) { return a.x - b.x; });
		hits.forEach(function (o) {
			var from = Math.max(o.x, end), to = o.x + o.w;
			if (to > from) {
				sum += to - from;
				end = to;
			}
		});
		var pct = all && all.w > 0 ? 100 * sum / all.w : 0;
		matched.textContent = 'Matched: ' + pct.toFixed(1) + '%';
		return pct;
	}

	function askSearch() {
		if (searching)
			return search('');
		var term = window.prompt('Search for (a regular expression):', '');
		if (term)
			search(term);
	}

	function frameOf(e) {
		var g = e.target.closest ? e.target.closest('g') : null;
		return g ? byG.get(g) : undefined;
	}

	svg.addEventListener('click', function (e) {
		var f = frameOf(e);
		if (f)
			zoom(f);
		else if (e.target === unzoomBtn)
			unzoom();
		else if (e.target === searchBtn)
			askSearch();
	});
	svg.addEventListener('mouseover', function (e) {
		var f = frameOf(e);
		if (f)
			details.textContent = f.title;
	});
	svg.addEventListener('mouseout', function (e) {
		if (frameOf(e))
			details.textContent = ' ';
	});
	window.addEventListener('keydown', function (e) {
		if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
			e.preventDefault();
			askSearch();
		} else if (e.key === 'Escape') {
			unzoom();
		}
	});
	// For pages and tests that drive the graph.
	window.flamegraph = { zoom: zoom, unzoom: unzoom, search: search, frames: frames };
})();
