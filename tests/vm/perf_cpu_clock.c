/* Self-test helper for tests/vm/selftest.sh: opens a cpu-clock perf event
 * sampling this process at 999 Hz, spins on the CPU for 1 s, and prints how
 * many samples arrived ("samples=N hz=H").  Exit 1 if perf_event_open fails
 * or no sample arrives.  Built static so that it runs in any guest. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = 999;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	a.disabled = 1;
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open(cpu-clock)");
		return 1;
	}
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = pg * (1 + 64);
	struct perf_event_mmap_page *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	double t0 = now(), t;
	volatile unsigned long x = 0;
	long samples = 0;
	unsigned long tail = 0;
	char *data = (char *)m + pg;
	size_t dsize = 64 * pg;
	do {
		for (int i = 0; i < 100000; i++)
			x += i;
		unsigned long head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
		while (tail < head) {
			struct perf_event_header *h = (void *)(data + tail % dsize);
			if (h->type == PERF_RECORD_SAMPLE)
				samples++;
			tail += h->size;
		}
		__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
		t = now();
	} while (t - t0 < 1.0);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	printf("samples=%ld hz=%.0f\n", samples, samples / (t - t0));
	return samples > 0 ? 0 : 1;
}
