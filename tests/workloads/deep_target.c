// SPDX-License-Identifier: BSD-2-Clause
/*
 * Deep, varied stacks: recursion 110-126 deep, each level one of twelve
 * functions picked at random, so nearly every sample is a stack never seen
 * before.  For the bounds on what a session's table of distinct stacks and
 * a flamegraph hold.  Runs until killed.
 */
#include <stdlib.h>

static unsigned s = 1;
static volatile unsigned long sink;

static unsigned rnd(void)
{
	s = s * 1103515245 + 12345;
	return s >> 16;
}

typedef void (*fn)(int);
static void go(int d);

#define F(n)								\
	__attribute__((noinline)) static void f##n(int d)		\
	{								\
		sink++;							\
		if (d)							\
			go(d - 1);					\
		else							\
			for (int i = 0; i < 2000; i++)			\
				sink++;					\
		__asm__ volatile("");					\
	}
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)

static fn fns[12] = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11};

__attribute__((noinline)) static void go(int d)
{
	fns[rnd() % 12](d);
	__asm__ volatile("");
}

int main(void)
{
	for (;;)
		go(110 + rnd() % 17);
}
