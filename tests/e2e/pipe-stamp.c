// SPDX-License-Identifier: GPL-2.0-only
/*
 * pipe-stamp: read a trace_pipe and timestamp every read; or write
 * trace_marker lines that carry their write time.
 *
 * Usage: pipe-stamp TRACE_PIPE SECONDS > OUT
 *        pipe-stamp -m TRACE_MARKER SECONDS RATE
 *
 * Reader: for SECONDS, read() TRACE_PIPE in a loop; after each read that
 * returned data, write "R <CLOCK_MONOTONIC ns>\n" and then the data to
 * stdout. With the instance's trace_clock set to "mono", the events'
 * timestamps and these stamps are on the same clock (measure-latency
 * scenario, tests/e2e/measure.py).
 *
 * Marker writer (-m): for SECONDS, about RATE times a second at random
 * phases, write "lat_mark t=<CLOCK_MONOTONIC ns>" to TRACE_MARKER: the
 * baseline of the same path for an event the kernel writes at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static int write_markers(const char *path, int seconds, int rate)
{
	unsigned long long end, mean_ns;
	int fd = open(path, O_WRONLY);

	if (fd < 0) {
		perror(path);
		return 1;
	}
	if (rate <= 0) {
		fprintf(stderr, "pipe-stamp: RATE must be > 0\n");
		return 2;
	}
	mean_ns = 1000000000ull / (unsigned int)rate;
	end = now_ns() + (unsigned long long)seconds * 1000000000ull;
	srandom((unsigned int)now_ns());
	while (now_ns() < end) {
		/* Uniform in [0.5, 1.5] x the mean: no phase lock with anything. */
		unsigned long long gap = mean_ns / 2 + (unsigned long long)random() % mean_ns;
		struct timespec ts = { .tv_sec = (time_t)(gap / 1000000000ull),
				       .tv_nsec = (long)(gap % 1000000000ull) };
		char line[64];
		int n;

		nanosleep(&ts, NULL);
		n = snprintf(line, sizeof(line), "lat_mark t=%llu\n", now_ns());
		if (write(fd, line, (size_t)n) != n) {
			perror("write trace_marker");
			return 1;
		}
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	struct sigaction sa = { .sa_handler = on_alarm };
	int fd;

	if (argc == 5 && !strcmp(argv[1], "-m"))
		return write_markers(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc != 3) {
		fprintf(stderr, "usage: pipe-stamp TRACE_PIPE SECONDS\n"
				"       pipe-stamp -m TRACE_MARKER SECONDS RATE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	/* No SA_RESTART: the alarm interrupts a blocked read(). */
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned int)atoi(argv[2]));
	while (!stop) {
		ssize_t n = read(fd, buf, sizeof(buf));
		unsigned long long t = now_ns();

		if (n < 0 && errno == EINTR)
			break;
		if (n < 0) {
			perror("read");
			return 1;
		}
		if (n == 0)
			continue;
		printf("R %llu\n", t);
		fwrite(buf, 1, (size_t)n, stdout);
	}
	fflush(stdout);
	return 0;
}
