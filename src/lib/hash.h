/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hash: the hash functions every table in profd uses.  FNV-1a to combine
 * bytes and words, then murmur3's fmix64 to mix: open addressing with a
 * power-of-two table looks only at the low bits, so they must depend on
 * every input bit.
 */
#ifndef PROFD_LIB_HASH_H
#define PROFD_LIB_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_SEED 0xcbf29ce484222325ULL
#define HASH_PRIME 0x100000001b3ULL

/* Multiplying by an odd constant is a bijection: no input bit is lost. */
static inline uint64_t hash__u64(uint64_t h, uint64_t v)
{
	return (h ^ v) * HASH_PRIME;
}

static inline uint64_t hash__bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *s = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * HASH_PRIME;
	return h;
}

static inline uint64_t hash__str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * HASH_PRIME;
	return h;
}

static inline uint32_t hash__final(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* The tables keyed by process id (procs, titles). */
static inline uint32_t hash__pid(int pid)
{
	return hash__final(hash__u64(HASH_SEED, (uint32_t)pid));
}

#endif
