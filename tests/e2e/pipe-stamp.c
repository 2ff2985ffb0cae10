// SPDX-License-Identifier: GPL-2.0-only
/*
 * pipe-stamp: read a trace_pipe and timestamp every read.
 *
 * Usage: pipe-stamp TRACE_PIPE SECONDS > OUT
 *
 * For SECONDS, read() TRACE_PIPE in a loop; after each read that returned
 * data, write "R <CLOCK_MONOTONIC ns>\n" and then the data to stdout. With
 * the instance's trace_clock set to "mono", the events' timestamps and these
 * stamps are on the same clock (measure-latency scenario, tests/e2e/measure.py).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	struct sigaction sa = { .sa_handler = on_alarm };
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: pipe-stamp TRACE_PIPE SECONDS\n");
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
