/*
 * agentbox-landlock: run a command inside a Landlock domain that confines which TCP ports it may
 * listen on and connect to, and keeps abstract UNIX sockets within the domain. Every process the
 * command starts inherits the domain, and nothing inside it can lift it (no_new_privs is set, and a
 * domain can only ever be narrowed).
 *
 *   agentbox-landlock --abi
 *       print the kernel's Landlock ABI version (0: Landlock unavailable) and exit
 *   agentbox-landlock [--bind RANGES] [--connect RANGES] [--scope-abstract-unix] -- COMMAND [ARG]...
 *       RANGES: comma-separated ports or LOW-HIGH ranges, or "none"; TCP bind() and connect() to
 *       any port not listed is refused with EACCES (once either option is given, both are confined)
 *
 * Written against the kernel's UAPI (linux/landlock.h) rather than its header, which Debian
 * bookworm ships from Linux 6.1, before network rules (ABI 4, Linux 6.7) and scoping (ABI 6,
 * Linux 6.12) existed. It fails closed: if the domain cannot be set up, the command is not run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define CREATE_RULESET_VERSION (1U << 0)
#define RULE_NET_PORT 2
#define ACCESS_NET_BIND_TCP (1ULL << 0)
#define ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)

struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
} __attribute__((packed));

#define PORTS 65536
static unsigned char allowed[PORTS]; /* per port: ACCESS_NET_* bits */

static void die(const char *what) {
  fprintf(stderr, "agentbox-landlock: %s: %s\n", what, strerror(errno));
  exit(126);
}

static void usage(const char *why) {
  fprintf(stderr,
          "agentbox-landlock: %s\n"
          "usage: agentbox-landlock --abi\n"
          "       agentbox-landlock [--bind RANGES] [--connect RANGES] [--scope-abstract-unix] -- COMMAND [ARG]...\n",
          why);
  exit(2);
}

static long parse_port(const char *text, char **end) {
  errno = 0;
  long port = strtol(text, end, 10);
  if (errno || *end == text || port < 0 || port >= PORTS) usage("a port must be a number from 0 to 65535");
  return port;
}

/* "80,443,20000-20099" -> the access bit set on each of those ports; "none" allows no port */
static void allow(const char *ranges, unsigned char access) {
  const char *at = strcmp(ranges, "none") == 0 ? "" : ranges;
  while (*at) {
    char *end;
    long low = parse_port(at, &end), high = low;
    if (*end == '-') high = parse_port(end + 1, &end);
    if (high < low) usage("a port range runs from its lower port to its higher one");
    for (long port = low; port <= high; port++) allowed[port] |= access;
    if (*end == ',') end++;
    else if (*end) usage("ports are separated by commas");
    at = end;
  }
}

static int abi(void) {
  long version = syscall(__NR_landlock_create_ruleset, NULL, 0, CREATE_RULESET_VERSION);
  return version < 0 ? 0 : (int)version;
}

int main(int argc, char **argv) {
  int confine_ports = 0, scope_abstract = 0, i = 1;
  if (argc == 2 && strcmp(argv[1], "--abi") == 0) {
    printf("%d\n", abi());
    return 0;
  }
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "--scope-abstract-unix") == 0) {
      scope_abstract = 1;
    } else if ((strcmp(argv[i], "--bind") == 0 || strcmp(argv[i], "--connect") == 0) && i + 1 < argc) {
      allow(argv[i + 1], argv[i][2] == 'b' ? ACCESS_NET_BIND_TCP : ACCESS_NET_CONNECT_TCP);
      confine_ports = 1;
      i++;
    } else {
      usage("unknown option");
    }
  }
  if (i + 1 >= argc) usage("no command given after --");
  char **command = argv + i + 1;

  int version = abi();
  if ((confine_ports && version < 4) || (scope_abstract && version < 6)) {
    fprintf(stderr, "agentbox-landlock: the kernel's Landlock ABI is %d; TCP port rules need 4 (Linux 6.7) and abstract-socket scoping 6 (Linux 6.12)\n",
            version);
    return 126;
  }
  struct ruleset_attr attr = {
      .handled_access_fs = 0,
      .handled_access_net = confine_ports ? ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP : 0,
      .scoped = scope_abstract ? SCOPE_ABSTRACT_UNIX_SOCKET : 0,
  };
  /* before ABI 6 the kernel does not know the `scoped` field: pass the shorter struct */
  size_t size = version >= 6 ? sizeof attr : offsetof(struct ruleset_attr, scoped);
  int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) die("landlock_create_ruleset");
  for (long port = 0; confine_ports && port < PORTS; port++) {
    if (!allowed[port]) continue;
    struct net_port_attr rule = {.allowed_access = allowed[port], .port = (uint64_t)port};
    if (syscall(__NR_landlock_add_rule, ruleset, RULE_NET_PORT, &rule, 0) != 0) die("landlock_add_rule");
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("prctl(PR_SET_NO_NEW_PRIVS)");
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) die("landlock_restrict_self");
  close(ruleset);
  execvp(command[0], command);
  fprintf(stderr, "agentbox-landlock: cannot run %s: %s\n", command[0], strerror(errno));
  return errno == ENOENT ? 127 : 126;
}
