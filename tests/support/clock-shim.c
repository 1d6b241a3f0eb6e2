/*
 * A wall clock that a test can step, preloaded (LD_PRELOAD) into processes of its own by
 * tests/support/fake-clock.ts: clock_gettime(CLOCK_REALTIME…), gettimeofday and time return the
 * real time plus the offset, in whole seconds, written in the file FERRY_CLOCK_OFFSET_FILE names
 * (read again at most once a millisecond). Every other clock, CLOCK_MONOTONIC first, is left
 * alone: as on a machine whose clock NTP or `date -s` steps.
 *
 * Why not libfaketime: redis-server (its allocator reads the clock while libfaketime sets itself
 * up) refuses to start under it. This shim allocates nothing and calls the kernel directly, so it
 * needs no set-up: it works in Node, PostgreSQL and Redis alike.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile long long offset_ns = 0;
static volatile long long read_at_ns = -1000000000000LL;

static long long monotonic_ns(void) {
  struct timespec now;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void read_offset(void) {
  long long now = monotonic_ns();
  if (now - read_at_ns < 1000000LL) return;
  read_at_ns = now;
  const char *file = getenv("FERRY_CLOCK_OFFSET_FILE");
  if (file == NULL) return;
  int fd = open(file, O_RDONLY);
  if (fd < 0) return;
  char text[32];
  ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0) return;
  text[length] = '\0';
  offset_ns = strtoll(text, NULL, 10) * 1000000000LL;
}

int clock_gettime(clockid_t clock, struct timespec *out) {
  long result = syscall(SYS_clock_gettime, clock, out);
  if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
    read_offset();
    long long ns = (long long)out->tv_sec * 1000000000LL + out->tv_nsec + offset_ns;
    out->tv_sec = ns / 1000000000LL;
    out->tv_nsec = ns % 1000000000LL;
  }
  return (int)result;
}

int gettimeofday(struct timeval *out, void *zone) {
  (void)zone;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (out != NULL) {
    out->tv_sec = now.tv_sec;
    out->tv_usec = now.tv_nsec / 1000;
  }
  return 0;
}

time_t time(time_t *out) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  if (out != NULL) *out = now.tv_sec;
  return now.tv_sec;
}
