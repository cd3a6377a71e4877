// SPDX-License-Identifier: BSD-2-Clause
/* scratch: inflated copies of debug files on disk (the contract: scratch.h). */
#define _GNU_SOURCE
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolizer/scratch.h"

#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6
#define FUSE_MAGIC_ 0x65735546
#define CHUNK (64u << 10)
/* Program headers are copied whole; a debug file has a dozen. */
#define PHDRS_MAX (64u << 10)
/* No section of a real file asks for more; a hostile one could ask 2^63. */
#define ALIGN_MAX 4096u

/* One section as both classes describe it, and where the copy puts it. */
struct sec {
	Elf64_Shdr sh;		/* as read, in the file's class widened */
	uint64_t out_off, out_size, out_align;
	uint64_t data_off;	/* where its bytes start in the input */
	bool inflate;
};

struct copy {
	int in, out;
	bool is64, inflate;
	uint64_t in_size, out_max, written;
	unsigned char *buf;	/* CHUNK in, CHUNK out */
};

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOEXEC;	/* shorter than its headers say */
		got += (size_t)n;
	}
	return 0;
}

static int pwrite_all(struct copy *c, const void *buf, size_t len, uint64_t off)
{
	size_t put = 0;

	if (off > c->out_max || len > c->out_max - off)
		return -EFBIG;
	while (put < len) {
		ssize_t n = pwrite(c->out, (const char *)buf + put, len - put, (off_t)(off + put));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		put += (size_t)n;
	}
	return 0;
}

static int copy_bytes(struct copy *c, uint64_t from, uint64_t len, uint64_t to)
{
	while (len) {
		size_t n = len < CHUNK ? (size_t)len : CHUNK;
		int err = pread_all(c->in, c->buf, n, from);

		if (!err)
			err = pwrite_all(c, c->buf, n, to);
		if (err)
			return err;
		from += n;
		to += n;
		len -= n;
	}
	return 0;
}

/* The zlib stream of s, inflated to exactly s->out_size bytes at its offset. */
static int inflate_section(struct copy *c, const struct sec *s)
{
	uint64_t from = s->data_off, left = s->sh.sh_offset + s->sh.sh_size - s->data_off;
	uint64_t to = s->out_off, end = s->out_off + s->out_size;
	unsigned char *out = c->buf + CHUNK;
	z_stream z = {0};
	int zr = Z_OK, err = 0;

	if (inflateInit(&z) != Z_OK)
		return -ENOMEM;
	while (zr != Z_STREAM_END) {
		if (!z.avail_in) {
			size_t n = left < CHUNK ? (size_t)left : CHUNK;

			if (!n) {
				err = -ENOEXEC;	/* the stream stops short */
				goto cleanup;
			}
			err = pread_all(c->in, c->buf, n, from);
			if (err)
				goto cleanup;
			from += n;
			left -= n;
			z.next_in = c->buf;
			z.avail_in = (uInt)n;
		}
		z.next_out = out;
		z.avail_out = CHUNK;
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END) {
			err = -ENOEXEC;
			goto cleanup;
		}
		/* Bytes after the stream: libelf refuses the section. */
		if (zr == Z_STREAM_END && (z.avail_in || left)) {
			err = -ENOEXEC;
			goto cleanup;
		}
		size_t n = CHUNK - z.avail_out;

		/* More than the header said is as wrong as less: libelf
		 * would refuse it, and the layout has no room for it. */
		if (n > end - to) {
			err = -ENOEXEC;
			goto cleanup;
		}
		err = pwrite_all(c, out, n, to);
		if (err)
			goto cleanup;
		to += n;
	}
	if (to != end)
		err = -ENOEXEC;
cleanup:
	inflateEnd(&z);
	return err;
}

/* The ELF header, read once: a file rewritten meanwhile cannot give the
 * layout one class and the copy's header another. */
static int read_header(struct copy *c, Elf64_Ehdr *eh, unsigned char *raw, size_t *raw_len)
{
	size_t want = c->in_size < sizeof(Elf64_Ehdr) ? (size_t)c->in_size : sizeof(Elf64_Ehdr);
	int err = want < sizeof(Elf32_Ehdr) ? -ENOEXEC : pread_all(c->in, raw, want, 0);

	if (err)
		return err;
	if (memcmp(raw, ELFMAG, SELFMAG) ||
	    raw[EI_DATA] != (__BYTE_ORDER == __LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB) ||
	    (raw[EI_CLASS] != ELFCLASS64 && raw[EI_CLASS] != ELFCLASS32))
		return -ENOEXEC;
	c->is64 = raw[EI_CLASS] == ELFCLASS64;
	if (c->is64) {
		*raw_len = sizeof(Elf64_Ehdr);
		if (want < *raw_len)
			return -ENOEXEC;
		memcpy(eh, raw, sizeof(*eh));
		return eh->e_shentsize == sizeof(Elf64_Shdr) ? 0 : -ENOEXEC;
	} else {
		Elf32_Ehdr e;

		*raw_len = sizeof(e);
		memcpy(&e, raw, sizeof(e));
		memcpy(eh->e_ident, e.e_ident, EI_NIDENT);
		eh->e_phoff = e.e_phoff;
		eh->e_shoff = e.e_shoff;
		eh->e_phnum = e.e_phnum;
		eh->e_phentsize = e.e_phentsize;
		eh->e_shnum = e.e_shnum;
		eh->e_shentsize = e.e_shentsize;
		eh->e_shstrndx = e.e_shstrndx;
		return eh->e_shentsize == sizeof(Elf32_Shdr) ? 0 : -ENOEXEC;
	}
}

static int read_sections(struct copy *c, const Elf64_Ehdr *eh, struct sec *secs)
{
	size_t n = eh->e_shnum, ent = eh->e_shentsize;
	unsigned char *raw = malloc(n * ent);
	int err;

	if (!raw)
		return -ENOMEM;
	err = pread_all(c->in, raw, n * ent, eh->e_shoff);
	for (size_t i = 0; !err && i < n; i++) {
		Elf64_Shdr *sh = &secs[i].sh;

		if (c->is64) {
			memcpy(sh, raw + i * ent, sizeof(*sh));
		} else {
			Elf32_Shdr s;

			memcpy(&s, raw + i * ent, sizeof(s));
			*sh = (Elf64_Shdr){s.sh_name, s.sh_type, s.sh_flags, s.sh_addr, s.sh_offset,
					   s.sh_size, s.sh_link, s.sh_info, s.sh_addralign,
					   s.sh_entsize};
		}
		if (sh->sh_type != SHT_NOBITS &&
		    (sh->sh_offset > c->in_size || sh->sh_size > c->in_size - sh->sh_offset))
			err = -ENOEXEC;
	}
	free(raw);
	return err;
}

/* Whether s is a zlib section, and if so its inflated size and alignment. */
static int read_chdr(struct copy *c, struct sec *s)
{
	unsigned char raw[sizeof(Elf64_Chdr)];
	size_t len = c->is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	uint64_t type, size, align;
	int err;

	s->inflate = false;
	s->out_size = s->sh.sh_size;
	s->out_align = s->sh.sh_addralign;
	s->data_off = s->sh.sh_offset;
	if (s->sh.sh_type == SHT_NOBITS || !(s->sh.sh_flags & SHF_COMPRESSED))
		return 0;
	if (s->sh.sh_size < len)
		return -ENOEXEC;
	err = pread_all(c->in, raw, len, s->sh.sh_offset);
	if (err)
		return err;
	if (c->is64) {
		Elf64_Chdr ch;

		memcpy(&ch, raw, sizeof(ch));
		type = ch.ch_type, size = ch.ch_size, align = ch.ch_addralign;
	} else {
		Elf32_Chdr ch;

		memcpy(&ch, raw, sizeof(ch));
		type = ch.ch_type, size = ch.ch_size, align = ch.ch_addralign;
	}
	/* zstd (elfutils 0.189 on) and anything newer: copied as it is,
	 * for libdw to read or refuse as it would have; and so is what
	 * libelf refuses to inflate (a section the program loads), and
	 * everything when only a copy is wanted. */
	if (type != ELFCOMPRESS_ZLIB || (s->sh.sh_flags & SHF_ALLOC) || !c->inflate)
		return 0;
	/* libelf's bound on the ratio (deflate's best is 1032:1): past it
	 * the header lies, and the copy is refused as libelf refuses it. */
	if (size / 1032 > s->sh.sh_size - len)
		return -ENOEXEC;
	s->inflate = true;
	s->out_size = size;
	s->out_align = align;
	s->data_off = s->sh.sh_offset + len;
	return 0;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) & ~(a - 1) : v;
}

static int by_offset(const void *a, const void *b)
{
	const struct sec *x = *(const struct sec *const *)a, *y = *(const struct sec *const *)b;

	return x->sh.sh_offset < y->sh.sh_offset ? -1 : x->sh.sh_offset > y->sh.sh_offset;
}

/*
 * No two sections with bytes may share any: a linker never writes that,
 * and a file that does could have one stream inflated once per header
 * pointing at it (5,000 headers over one stream took 19 s), or 4 MB copied
 * into 500.  So every input byte is read once at most, and a copy is no
 * larger than its input but for what inflating adds.
 */
static int check_overlaps(const Elf64_Ehdr *eh, struct sec *secs)
{
	struct sec **v = malloc(eh->e_shnum * sizeof(*v));
	size_t n = 0;
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 1; i < eh->e_shnum; i++)
		if (secs[i].sh.sh_type != SHT_NOBITS && secs[i].sh.sh_size)
			v[n++] = &secs[i];
	qsort(v, n, sizeof(*v), by_offset);
	for (size_t i = 1; i < n && !err; i++)
		if (v[i]->sh.sh_offset < v[i - 1]->sh.sh_offset + v[i - 1]->sh.sh_size)
			err = -ENOEXEC;
	free(v);
	return err;
}

/* Every section's compression header: what inflates, and to what. */
static int read_chdrs(struct copy *c, const Elf64_Ehdr *eh, struct sec *secs, bool *any)
{
	*any = false;
	for (size_t i = 1; i < eh->e_shnum; i++) {
		int err = read_chdr(c, &secs[i]);

		if (err)
			return err;
		*any |= secs[i].inflate;
	}
	return 0;
}

/* Offsets in the copy: the headers where they were, every section after
 * them in order, the section header table last.  Sizes are checked
 * against max here, before anything is written. */
static int lay_out(struct copy *c, const Elf64_Ehdr *eh, size_t ehsize, struct sec *secs,
		   uint64_t *shoff)
{
	uint64_t cur = ehsize;

	if (eh->e_phnum) {
		uint64_t ph = (uint64_t)eh->e_phnum * eh->e_phentsize;

		if (ph > PHDRS_MAX || eh->e_phoff < ehsize || eh->e_phoff > c->in_size ||
		    ph > c->in_size - eh->e_phoff)
			return -ENOEXEC;
		cur = eh->e_phoff + ph;
	}
	for (size_t i = 1; i < eh->e_shnum; i++) {
		struct sec *s = &secs[i];

		if (s->sh.sh_type == SHT_NOBITS) {
			s->out_off = cur;	/* no bytes: its alignment is the loader's */
			continue;
		}
		if (s->out_align > ALIGN_MAX || (s->out_align & (s->out_align - 1)))
			return -ENOEXEC;
		cur = align_up(cur, s->out_align);
		s->out_off = cur;
		if (s->out_size > c->out_max || cur > c->out_max - s->out_size)
			return -EFBIG;
		cur += s->out_size;
	}
	*shoff = align_up(cur, 8);
	if (*shoff > c->out_max || (uint64_t)eh->e_shnum * eh->e_shentsize > c->out_max - *shoff)
		return -EFBIG;
	return 0;
}

static int write_headers(struct copy *c, const Elf64_Ehdr *eh, unsigned char *raw, size_t ehsize,
			 const struct sec *secs, uint64_t shoff)
{
	size_t ent = eh->e_shentsize;
	unsigned char *tab;
	int err;

	if (c->is64) {
		Elf64_Ehdr e;

		memcpy(&e, raw, sizeof(e));
		e.e_shoff = shoff;
		memcpy(raw, &e, sizeof(e));
	} else {
		Elf32_Ehdr e;

		memcpy(&e, raw, sizeof(e));
		if (shoff > UINT32_MAX)
			return -EFBIG;
		e.e_shoff = (Elf32_Off)shoff;
		memcpy(raw, &e, sizeof(e));
	}
	err = pwrite_all(c, raw, ehsize, 0);
	if (!err && eh->e_phnum)
		err = copy_bytes(c, eh->e_phoff, (uint64_t)eh->e_phnum * eh->e_phentsize, eh->e_phoff);
	if (err)
		return err;
	tab = calloc(eh->e_shnum, ent);
	if (!tab)
		return -ENOMEM;
	for (size_t i = 1; i < eh->e_shnum; i++) {
		Elf64_Shdr sh = secs[i].sh;

		sh.sh_offset = secs[i].out_off;
		if (secs[i].inflate) {
			sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
			sh.sh_size = secs[i].out_size;
			sh.sh_addralign = secs[i].out_align;
		}
		if (c->is64) {
			memcpy(tab + i * ent, &sh, sizeof(sh));
		} else {
			Elf32_Shdr s = {sh.sh_name, sh.sh_type, (Elf32_Word)sh.sh_flags,
					(Elf32_Addr)sh.sh_addr, (Elf32_Off)sh.sh_offset,
					(Elf32_Word)sh.sh_size, sh.sh_link, sh.sh_info,
					(Elf32_Word)sh.sh_addralign, (Elf32_Word)sh.sh_entsize};

			if (sh.sh_offset > UINT32_MAX || sh.sh_size > UINT32_MAX) {
				free(tab);
				return -EFBIG;
			}
			memcpy(tab + i * ent, &s, sizeof(s));
		}
	}
	/* Section 0 is copied too: it holds e_shnum and e_shstrndx when
	 * those overflow their fields. */
	if (c->is64) {
		memcpy(tab, &secs[0].sh, sizeof(Elf64_Shdr));
	} else {
		const Elf64_Shdr *z = &secs[0].sh;
		Elf32_Shdr s = {z->sh_name, z->sh_type, (Elf32_Word)z->sh_flags,
				(Elf32_Addr)z->sh_addr, (Elf32_Off)z->sh_offset,
				(Elf32_Word)z->sh_size, z->sh_link, z->sh_info,
				(Elf32_Word)z->sh_addralign, (Elf32_Word)z->sh_entsize};

		memcpy(tab, &s, sizeof(s));
	}
	err = pwrite_all(c, tab, (size_t)eh->e_shnum * ent, shoff);
	free(tab);
	return err;
}

/*
 * dir, opened once (what is checked is where the copy goes): root's, on a
 * disk (a copy in memory saves nothing), and not FUSE, whose server, a
 * user's program, could change the copy under libdw's mapping.
 */
static int open_dir(const char *dir, uint64_t *free_bytes)
{
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct statvfs svfs;
	struct statfs sfs;
	struct stat st;
	int err = 0;

	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st) || fstatfs(dfd, &sfs) || fstatvfs(dfd, &svfs))
		err = -errno;
	else if ((unsigned long)sfs.f_type == TMPFS_MAGIC_ || (unsigned long)sfs.f_type == RAMFS_MAGIC_)
		err = -EXDEV;
	else if (st.st_uid != 0 || (unsigned long)sfs.f_type == FUSE_MAGIC_)
		err = -EPERM;
	if (err) {
		close(dfd);
		return err;
	}
	*free_bytes = (uint64_t)svfs.f_bavail * svfs.f_frsize;
	return dfd;
}

int scratch__copy(int fd, const char *dir, uint64_t max, unsigned int flags)
{
	struct copy c = {.in = fd, .out = -1, .inflate = flags & SCRATCH_INFLATE};
	unsigned char raw[sizeof(Elf64_Ehdr)];
	struct sec *secs = NULL;
	uint64_t free_bytes = 0, shoff = 0;
	Elf64_Ehdr eh = {0};
	size_t ehsize;
	struct stat st;
	bool any;
	int err, dfd = -1;

	if (fstat(fd, &st))
		return -errno;
	c.in_size = (uint64_t)st.st_size;
	err = read_header(&c, &eh, raw, &ehsize);
	if (err)
		return err;
	/* 0 sections here means more than 65,279, counted in section 0;
	 * no debug file has that many. */
	if (!eh.e_shnum || eh.e_shnum >= SHN_LORESERVE || eh.e_shstrndx >= eh.e_shnum ||
	    eh.e_shoff > c.in_size || (uint64_t)eh.e_shnum * eh.e_shentsize > c.in_size - eh.e_shoff)
		return -ENOEXEC;
	dfd = open_dir(dir, &free_bytes);
	if (dfd < 0)
		return dfd;
	c.out_max = max < free_bytes / 2 ? max : free_bytes / 2;
	secs = calloc(eh.e_shnum, sizeof(*secs));
	c.buf = malloc(2 * CHUNK);
	if (!secs || !c.buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = read_sections(&c, &eh, secs);
	if (!err)
		err = check_overlaps(&eh, secs);
	if (!err)
		err = read_chdrs(&c, &eh, secs, &any);
	if (!err && !any && !(flags & SCRATCH_ALWAYS))
		err = -ENODATA;	/* nothing to do, whatever the sizes */
	if (!err)
		err = lay_out(&c, &eh, ehsize, secs, &shoff);
	if (err)
		goto cleanup;
	c.out = openat(dfd, ".", O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (c.out < 0) {
		err = errno == EISDIR ? -EOPNOTSUPP : -errno;	/* EISDIR: kernel < 3.11 */
		goto cleanup;
	}
	for (size_t i = 1; !err && i < eh.e_shnum; i++) {
		const struct sec *s = &secs[i];

		if (s->sh.sh_type == SHT_NOBITS || !s->out_size)
			continue;
		err = s->inflate ? inflate_section(&c, s)
				 : copy_bytes(&c, s->sh.sh_offset, s->sh.sh_size, s->out_off);
	}
	if (!err)
		err = write_headers(&c, &eh, raw, ehsize, secs, shoff);
cleanup:
	if (dfd >= 0)
		close(dfd);
	free(secs);
	free(c.buf);
	if (err) {
		if (c.out >= 0)
			close(c.out);
		return err;
	}
	return c.out;
}
