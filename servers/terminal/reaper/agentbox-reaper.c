/*
 * agentbox-reaper: run a command so that nothing it starts outlives it, without anyone scanning
 * the process table when it ends cleanly.
 *
 *   agentbox-reaper REPORT_FD COMMAND [ARG]...
 *
 * The reaper makes itself a child subreaper (PR_SET_CHILD_SUBREAPER): every process the command
 * starts stays below it whatever it does (setsid, double forks, `env -i`), since an orphan is
 * handed to the nearest subreaper above it rather than to init. When the command exits, the
 * reaper kills whatever is left below it, reaps it, writes how many processes it killed as one
 * line ("3\n") to REPORT_FD, and exits as the command did (its exit code, or the signal that
 * ended it, raised again). The report comes only once nothing is left: a reaper killed before
 * then (by the command itself, which runs as the same user) writes none, and its caller has to
 * find the leftovers another way. The terminal server does so by the tree's marker
 * (servers/lib/proctree.ts).
 *
 * A no-op handler for the signals a script sends its own process group (`kill 0`, a terminal's
 * SIGINT or SIGHUP) keeps the reaper alive through them; handlers, unlike ignored signals, are
 * reset when the command is exec'd. The reaper is not dumpable, so the command (same user) can
 * neither ptrace it nor open its report pipe through /proc. Where the kernel refuses either prctl,
 * the reaper runs the command in its own place and reports nothing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Rounds of kill-and-reap before giving up on a tree that keeps forking faster than it dies. */
#define MAX_ROUNDS 200

struct pids {
  pid_t *at;
  size_t length, capacity;
};

static void push(struct pids *list, pid_t pid) {
  if (list->length == list->capacity) {
    list->capacity = list->capacity ? list->capacity * 2 : 64;
    list->at = realloc(list->at, list->capacity * sizeof(pid_t));
    if (!list->at) {
      fputs("agentbox-reaper: out of memory\n", stderr);
      _exit(126);
    }
  }
  list->at[list->length++] = pid;
}

static int contains(const struct pids *list, pid_t pid) {
  for (size_t i = 0; i < list->length; i++)
    if (list->at[i] == pid) return 1;
  return 0;
}

/* The parent and state of a process from /proc/PID/stat; 0 when it is gone. */
static int read_stat(pid_t pid, pid_t *parent, char *state) {
  char path[64], buffer[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buffer, sizeof buffer - 1);
  close(fd);
  if (n <= 0) return 0;
  buffer[n] = '\0';
  /* the name in parentheses may hold anything, ")" included: the fields follow the last one */
  char *after = strrchr(buffer, ')');
  int ppid;
  if (!after || sscanf(after + 1, " %c %d", state, &ppid) != 2) return 0;
  *parent = ppid;
  return 1;
}

/*
 * SIGKILL every live process below this one (found by parent links: the kernel keeps no list of
 * a process's children here). What a killed process forks meanwhile is handed to this reaper when
 * its parent dies, and the next round finds it. Adds each newly killed pid to `killed`.
 */
static void kill_descendants(struct pids *killed) {
  struct pids all = {0}, parents = {0}, below = {0};
  char state;
  DIR *proc = opendir("/proc");
  if (!proc) return;
  struct dirent *entry;
  while ((entry = readdir(proc))) {
    char *end;
    long pid = strtol(entry->d_name, &end, 10);
    pid_t parent;
    if (*end || pid <= 0 || !read_stat((pid_t)pid, &parent, &state) || state == 'Z') continue;
    push(&all, (pid_t)pid);
    push(&parents, parent);
  }
  closedir(proc);
  push(&below, getpid());
  for (size_t added = 1; added;) {
    added = 0;
    for (size_t i = 0; i < all.length; i++)
      if (all.at[i] && contains(&below, parents.at[i])) {
        push(&below, all.at[i]);
        all.at[i] = 0;
        added++;
      }
  }
  for (size_t i = 1; i < below.length; i++)
    if (kill(below.at[i], SIGKILL) == 0 && !contains(killed, below.at[i])) push(killed, below.at[i]);
  free(all.at);
  free(parents.at);
  free(below.at);
}

/* Kill and reap everything left below this process; 0 once nothing is, -1 if it could not. */
static int end_leftovers(struct pids *killed) {
  for (int round = 0; round < MAX_ROUNDS; round++) {
    pid_t reaped;
    while ((reaped = waitpid(-1, NULL, WNOHANG)) > 0 || (reaped < 0 && errno == EINTR)) {
    }
    if (reaped < 0) return 0; /* ECHILD: no child left, so nothing below */
    kill_descendants(killed);
    /* give SIGKILL time to land: 1 ms, growing to 10 */
    struct timespec pause = {0, (round < 10 ? round + 1 : 10) * 1000000L};
    while (nanosleep(&pause, &pause) < 0 && errno == EINTR) {
    }
  }
  return -1;
}

static void keep_running(int signal_number) { (void)signal_number; }

int main(int argc, char **argv) {
  char *end;
  long report = argc >= 3 ? strtol(argv[1], &end, 10) : -1;
  if (argc < 3 || *end || report < 3 || fcntl((int)report, F_SETFD, FD_CLOEXEC) < 0) {
    fputs("usage: agentbox-reaper REPORT_FD COMMAND [ARG]... (REPORT_FD: an open descriptor above 2)\n", stderr);
    return 126;
  }
  if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
    /* refused (a seccomp profile may): run the command in this process; with no report coming,
       the caller finds what it leaves behind itself */
    close((int)report);
    execvp(argv[2], argv + 2);
    fprintf(stderr, "agentbox-reaper: %s: %s\n", argv[2], strerror(errno));
    return 127;
  }
  struct sigaction keep = {0};
  keep.sa_handler = keep_running;
  int survived[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM};
  for (size_t i = 0; i < sizeof survived / sizeof *survived; i++) sigaction(survived[i], &keep, NULL);

  pid_t command = fork();
  if (command < 0) {
    fprintf(stderr, "agentbox-reaper: fork: %s\n", strerror(errno));
    return 126;
  }
  if (command == 0) {
    execvp(argv[2], argv + 2);
    fprintf(stderr, "agentbox-reaper: %s: %s\n", argv[2], strerror(errno));
    _exit(127);
  }
  int status = 0;
  for (;;) {
    pid_t reaped = waitpid(-1, &status, 0);
    if (reaped == command) break;
    if (reaped < 0 && errno != EINTR) return 126; /* cannot happen: the command is a child */
  }
  struct pids killed = {0};
  if (end_leftovers(&killed) == 0) dprintf((int)report, "%zu\n", killed.length);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  int ended_by = WTERMSIG(status);
  signal(ended_by, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, ended_by);
  sigprocmask(SIG_UNBLOCK, &only, NULL);
  raise(ended_by);
  return 128 + ended_by;
}
