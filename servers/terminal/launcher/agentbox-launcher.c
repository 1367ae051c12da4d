/*
 * agentbox-launcher: start the terminal server's commands, so that the server (a Node process of
 * tens of megabytes) is not forked for each one. A fork copies the forking process's page tables
 * and the child tears the copy down again at exec: for Node that is about 1 ms of CPU per command,
 * for this small program a tenth of it.
 *
 *   agentbox-launcher SOCKET_PATH
 *
 * Requests come on stdin, each a decimal length and a newline, then that many bytes of
 * NUL-terminated fields:
 *
 *   NONCE CWD STREAMS ARGC ARGV[0] ... ARGV[ARGC-1] ENV...
 *
 * STREAMS names the descriptors the command gets as connections to the server's socket at
 * SOCKET_PATH: o (stdout), e (stderr), i (stdin), r (descriptor 3); a stdin, stdout or stderr not
 * named is /dev/null. Each connection first says "NONCE KIND\n", so the server knows whose stream
 * it is; every connection is made before the command starts. Then the command runs in a new
 * session, from CWD, as ARGV (an absolute path) with exactly ENV. Answers on stdout, one line each:
 *
 *   started NONCE PID        failed NONCE WHY        exited NONCE CODE SIGNAL   ("-" for neither)
 *
 * The launcher ends when stdin does. It is not dumpable: the commands, which run as the same user,
 * can neither ptrace it nor read its descriptors through /proc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* A request larger than this is refused: execve takes far less (ARG_MAX). */
#define MAX_REQUEST (16 << 20)
#define NONCE_LENGTH 32
/* A connection the server does not take within this long fails the command rather than hang the launcher. */
#define CONNECT_TIMEOUT_S 5
/* Descriptors are moved up here before the command's 0-3 are set, so no dup2 overwrites another. */
#define HIGH_FD 64

struct command {
  pid_t pid;
  char nonce[NONCE_LENGTH + 1];
};

static struct command *running;
static size_t running_length, running_capacity;
static int woken[2]; /* the SIGCHLD handler writes here; the loop polls it */
static const char *socket_path;

static void on_child(int signal_number) {
  (void)signal_number;
  int saved = errno;
  (void)!write(woken[1], "", 1);
  errno = saved;
}

static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n < 0) return;
  if ((size_t)n >= sizeof line) n = sizeof line - 1;
  for (int done = 0; done < n;) {
    ssize_t w = write(1, line + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(0); /* the server is gone */
    done += w;
  }
}

static int valid_nonce(const char *nonce) {
  if (strlen(nonce) != NONCE_LENGTH) return 0;
  for (const char *c = nonce; *c; c++)
    if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))) return 0;
  return 1;
}

/* A connection to the server's socket that has said whose stream it is; -1 with errno set. */
static int stream_to_server(const char *nonce, char kind) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  strncpy(address.sun_path, socket_path, sizeof address.sun_path - 1);
  struct timeval timeout = {CONNECT_TIMEOUT_S, 0};
  char hello[NONCE_LENGTH + 4];
  int n = snprintf(hello, sizeof hello, "%s %c\n", nonce, kind);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) < 0 ||
      write(fd, hello, n) != n) {
    int saved = errno;
    close(fd);
    errno = saved ? saved : EPIPE;
    return -1;
  }
  int high = fcntl(fd, F_DUPFD_CLOEXEC, HIGH_FD);
  int saved = errno;
  close(fd);
  errno = saved;
  return high;
}

static void remember(pid_t pid, const char *nonce) {
  if (running_length == running_capacity) {
    running_capacity = running_capacity ? running_capacity * 2 : 16;
    running = realloc(running, running_capacity * sizeof *running);
    if (!running) {
      fputs("agentbox-launcher: out of memory\n", stderr);
      _exit(1);
    }
  }
  running[running_length].pid = pid;
  memcpy(running[running_length].nonce, nonce, NONCE_LENGTH + 1);
  running_length++;
}

/* In the child: the command's descriptors, session and directory, then the command itself. */
static void become(int streams[4], const char *cwd, char **argv, char **envp) {
  signal(SIGPIPE, SIG_DFL); /* an ignored signal stays ignored across exec */
  signal(SIGCHLD, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  /* a stream not asked for is /dev/null: descriptors 0 and 1 are the launcher's pipes to the server */
  for (int target = 0; target < 3; target++)
    if (streams[target] < 0) streams[target] = open("/dev/null", (target ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
  for (int target = 0; target < 4; target++)
    if (streams[target] >= 0 && dup2(streams[target], target) < 0) _exit(126);
  setsid();
  if (chdir(cwd) < 0) {
    dprintf(2, "agentbox-launcher: cannot enter %s: %s\n", cwd, strerror(errno));
    _exit(126);
  }
  execve(argv[0], argv, envp);
  dprintf(2, "agentbox-launcher: %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

/* One request: its fields are NUL-terminated strings in `fields`, `length` bytes in all. */
static void start(char *fields, size_t length) {
  char *end = fields + length, *at = fields;
  char *nonce = at;
  at += strlen(at) + 1;
  if (at >= end || !valid_nonce(nonce)) {
    fputs("agentbox-launcher: a request without a valid nonce, ignored\n", stderr);
    return;
  }
  char *cwd = at;
  at += strlen(at) + 1;
  char *kinds = at < end ? at : "";
  at += strlen(kinds) + 1;
  long argc = at < end ? strtol(at, NULL, 10) : 0;
  at += at < end ? strlen(at) + 1 : 0;
  size_t strings = 0;
  for (char *s = at; s < end; s += strlen(s) + 1) strings++;
  if (argc < 1 || (size_t)argc > strings || strspn(kinds, "oeir") != strlen(kinds)) {
    say("failed %s malformed request\n", nonce);
    return;
  }
  char **argv = calloc(strings + 2, sizeof *argv);
  if (!argv) {
    say("failed %s out of memory\n", nonce);
    return;
  }
  /* argv[0..argc-1], then NULL, then the environment, then NULL */
  size_t slot = 0, index = 0;
  for (char *s = at; s < end; s += strlen(s) + 1, index++) {
    if (index == (size_t)argc) slot++;
    argv[slot++] = s;
  }
  char **envp = argv + argc + 1;

  int streams[4] = {-1, -1, -1, -1};
  const char order[] = "ioer";
  for (const char *kind = kinds; *kind; kind++) {
    int slot = strchr(order, *kind) - order;
    if (streams[slot] >= 0) continue;
    streams[slot] = stream_to_server(nonce, *kind);
    if (streams[slot] < 0) {
      say("failed %s cannot reach the server's socket: %s\n", nonce, strerror(errno));
      goto done;
    }
  }
  pid_t pid = fork();
  if (pid == 0) become(streams, cwd, argv, envp);
  if (pid < 0) {
    say("failed %s fork: %s\n", nonce, strerror(errno));
    goto done;
  }
  remember(pid, nonce);
  say("started %s %d\n", nonce, (int)pid);
done:
  for (int s = 0; s < 4; s++)
    if (streams[s] >= 0) close(streams[s]);
  free(argv);
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (size_t i = 0; i < running_length; i++) {
      if (running[i].pid != pid) continue;
      if (WIFEXITED(status))
        say("exited %s %d -\n", running[i].nonce, WEXITSTATUS(status));
      else
        say("exited %s - %d\n", running[i].nonce, WTERMSIG(status));
      running[i] = running[--running_length];
      break;
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 2 || strlen(argv[1]) >= sizeof ((struct sockaddr_un *)0)->sun_path) {
    fputs("usage: agentbox-launcher SOCKET_PATH (shorter than 108 bytes)\n", stderr);
    return 2;
  }
  socket_path = argv[1];
  if (prctl(PR_SET_DUMPABLE, 0) < 0 || pipe2(woken, O_CLOEXEC | O_NONBLOCK) < 0) {
    perror("agentbox-launcher");
    return 1;
  }
  signal(SIGPIPE, SIG_IGN);
  struct sigaction child = {0};
  child.sa_handler = on_child;
  child.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &child, NULL);

  size_t capacity = 1 << 16, filled = 0;
  char *buffer = malloc(capacity);
  if (!buffer) return 1;
  for (;;) {
    struct pollfd watched[2] = {{.fd = 0, .events = POLLIN}, {.fd = woken[0], .events = POLLIN}};
    if (poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      perror("agentbox-launcher: poll");
      return 1;
    }
    if (watched[1].revents) {
      char drained[64];
      while (read(woken[0], drained, sizeof drained) > 0) {
      }
      reap();
    }
    if (!watched[0].revents) continue;
    if (filled == capacity) {
      if (capacity >= MAX_REQUEST + 32) {
        fputs("agentbox-launcher: a request over 16 MiB, ending\n", stderr);
        return 1;
      }
      capacity *= 2;
      buffer = realloc(buffer, capacity);
      if (!buffer) return 1;
    }
    ssize_t n = read(0, buffer + filled, capacity - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0; /* the server closed its end: it is going */
    filled += n;
    /* every whole request in the buffer */
    for (;;) {
      char *newline = memchr(buffer, '\n', filled < 16 ? filled : 16);
      if (!newline) {
        if (filled >= 16) {
          fputs("agentbox-launcher: a request without its length, ending\n", stderr);
          return 1;
        }
        break;
      }
      size_t header = newline - buffer + 1;
      unsigned long length = strtoul(buffer, NULL, 10);
      if (length == 0 || length > MAX_REQUEST) {
        fputs("agentbox-launcher: a request of a bad length, ending\n", stderr);
        return 1;
      }
      if (filled < header + length) break;
      if (buffer[header + length - 1] == '\0')
        start(buffer + header, length);
      else
        fputs("agentbox-launcher: a request whose last field is not terminated, ignored\n", stderr);
      memmove(buffer, buffer + header + length, filled - header - length);
      filled -= header + length;
    }
  }
}
