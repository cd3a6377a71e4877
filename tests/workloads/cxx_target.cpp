// SPDX-License-Identifier: BSD-2-Clause
/*
 * cxx_target: C++ functions whose names must come out demangled, in a
 * namespace, a class and a class template:
 *
 *   cxx_target [SECONDS]
 *
 * Burns CPU for SECONDS (default 1) in ns::Class::method(int) and
 * ns::Holder<int>::spin(unsigned long) const, both out of line, called
 * from main.  Loop bounds are read from volatiles so that GCC makes no
 * .constprop clone (whose name would carry a " [clone ...]" suffix).
 */
#include <cstdlib>
#include <ctime>

namespace ns {

static volatile unsigned long sink;
static volatile int work = 1 << 16;

class Class {
public:
	__attribute__((noinline)) unsigned long method(int n);
};

unsigned long Class::method(int n)
{
	unsigned long x = 0;

	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005ul + (unsigned long)i;
	sink = x;
	return x;
}

template <typename T> struct Holder {
	T v;
	__attribute__((noinline)) unsigned long spin(unsigned long n) const;
};

template <typename T> unsigned long Holder<T>::spin(unsigned long n) const
{
	unsigned long x = (unsigned long)v;

	for (unsigned long i = 0; i < n; i++)
		x ^= x << 7 ^ x >> 9 ^ i;
	sink = x;
	return x;
}

template struct Holder<int>;

} // namespace ns

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	struct timespec start, now;
	ns::Class c;
	ns::Holder<int> h = {3};

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		c.method(ns::work);
		h.spin((unsigned long)ns::work);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	return 0;
}
