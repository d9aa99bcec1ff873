// respond-pacing-probe: latlab respond's signal channel in ~150 lines of C,
// with one switch per difference from rt-tests' sigwaittest, so each can be
// measured on its own (bench/respond-pacing-probe.sh runs them side by side).
//
// Default = latlab's method: a forked responder (SCHED_FIFO 95, mlocked)
// blocks in sigwaitinfo for SIGUSR1; the stimulus (SCHED_FIFO 94) sleeps to
// its next absolute deadline, reads CLOCK_MONOTONIC, tgkill()s the responder
// and waits for SIGUSR2 (sigtimedwait); the responder stores its wake-up time
// in a shared page and answers. Both on one CPU. Prints the one-way latency.
//
//   -n N      events (5000)            -g US   gap between sends (1000)
//   -s PRIO   stimulus priority (94; 0 = SCHED_OTHER)
//   -r PRIO   responder priority (95)  -c CPU  CPU of both (0)
//   -k        kill() instead of tgkill()
//   -t        gettimeofday() timestamps instead of CLOCK_MONOTONIC
//   -L        no mlockall
//   -w        the stimulus waits for the answer with sigwaitinfo (no timeout)
//   -b        the stimulus busy-waits the gap (the CPU never idles and no
//             other task runs there)
//   -P        ping-pong pacing, as sigwaittest: the responder sleeps the gap
//             after each wake-up, then answers; the stimulus sends at once
//   -T KB     before each send the stimulus writes KB of memory (evicts caches)
//
// Build: cc -O2 -o probe bench/respond-pacing-probe.c   (run as root)
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
	volatile uint64_t wake_ns;
	volatile int ready;
};

static int events = 5000, gap_us = 1000, stim_prio = 94, resp_prio = 95, cpu;
static int use_kill, use_tod, no_lock, untimed, busy, ping_pong, evict_kb;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

// The timestamps of the measurement (pacing always uses CLOCK_MONOTONIC).
static uint64_t stamp_ns(void)
{
	struct timeval tv;
	if (!use_tod)
		return mono_ns();
	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000000000u + tv.tv_usec * 1000u;
}

static void take_place(int prio)
{
	cpu_set_t set;
	struct sched_param param = { .sched_priority = prio };

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
	if (prio > 0 && sched_setscheduler(0, SCHED_FIFO, &param))
		perror("sched_setscheduler (run as root)");
	if (!no_lock && mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("mlockall");
}

static void send_signal(pid_t pid, int sig)
{
	if (use_kill)
		kill(pid, sig);
	else
		syscall(SYS_tgkill, pid, pid, sig);
}

// Returns 0 when the signal came, -1 on a timeout.
static int wait_signal(int sig, int timed)
{
	sigset_t set;
	siginfo_t info;
	struct timespec one_second = { 1, 0 };

	sigemptyset(&set);
	sigaddset(&set, sig);
	if (timed)
		return sigtimedwait(&set, &info, &one_second) == sig ? 0 : -1;
	return sigwaitinfo(&set, &info) == sig ? 0 : -1;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000u, ns % 1000000000u };
	nanosleep(&ts, NULL);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int opt, lost = 0, n = 0;
	while ((opt = getopt(argc, argv, "n:g:s:r:c:ktLwbPT:")) != -1) {
		switch (opt) {
		case 'n': events = atoi(optarg); break;
		case 'g': gap_us = atoi(optarg); break;
		case 's': stim_prio = atoi(optarg); break;
		case 'r': resp_prio = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 'k': use_kill = 1; break;
		case 't': use_tod = 1; break;
		case 'L': no_lock = 1; break;
		case 'w': untimed = 1; break;
		case 'b': busy = 1; break;
		case 'P': ping_pong = 1; break;
		case 'T': evict_kb = atoi(optarg); break;
		default:
			fprintf(stderr, "see the comment at the top of respond-pacing-probe.c\n");
			return 1;
		}
	}
	if (events < 1 || gap_us < 1)
		return 1;

	struct shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t *lat = calloc(events, sizeof(*lat));
	volatile char *evict = evict_kb ? malloc((size_t)evict_kb * 1024) : NULL;
	if (sh == MAP_FAILED || !lat || (evict_kb && !evict))
		return 1;
	sigset_t both;
	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGUSR2);
	sigprocmask(SIG_BLOCK, &both, NULL);

	pid_t stimulus = getpid(), responder = fork();
	if (responder < 0)
		return 1;
	if (responder == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		take_place(resp_prio);
		sh->ready = 1;
		for (;;) {
			if (wait_signal(SIGUSR1, 0))
				continue;
			sh->wake_ns = stamp_ns();
			if (ping_pong)
				sleep_ns(gap_us * 1000ull);
			send_signal(stimulus, SIGUSR2);
		}
	}
	while (!sh->ready)
		usleep(1000);
	take_place(stim_prio);

	uint64_t next = mono_ns();
	for (int i = 0; i < events; i++) {
		if (!ping_pong) {
			next += gap_us * 1000ull;
			if (busy) {
				while (mono_ns() < next)
					;
			} else {
				struct timespec ts = { next / 1000000000u, next % 1000000000u };
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			}
		}
		for (size_t k = 0; evict && k < (size_t)evict_kb * 1024; k += 64)
			evict[k] = (char)i;
		sh->wake_ns = 0;
		uint64_t t0 = stamp_ns();
		send_signal(responder, SIGUSR1);
		if (wait_signal(SIGUSR2, !untimed) || sh->wake_ns < t0) {
			lost++;
			continue;
		}
		lat[n++] = sh->wake_ns - t0;
	}
	kill(responder, SIGKILL);
	waitpid(responder, NULL, 0);
	if (n == 0) {
		fprintf(stderr, "no event answered\n");
		return 1;
	}

	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += lat[i];
	qsort(lat, n, sizeof(*lat), by_value);
	printf("events %d lost %d min %.2f mean %.2f p50 %.2f p90 %.2f max %.1f us\n",
	       n, lost, lat[0] / 1e3, sum / n / 1e3, lat[n / 2] / 1e3,
	       lat[(size_t)n * 9 / 10] / 1e3, lat[n - 1] / 1e3);
	return 0;
}
