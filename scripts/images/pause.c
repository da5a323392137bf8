/*
 * The pause image's only program: PID 1 of every pod sandbox. It holds the
 * pod's namespaces open, reaps zombies that end up parented to it (processes
 * in a shared PID namespace), and exits at once on SIGTERM or SIGINT: PID 1
 * gets no default signal handling from the kernel, so without handlers a
 * sandbox would take the whole grace period to stop. Same job as Kubernetes'
 * build/pause/linux/pause.c; built here with `gcc -static`.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signo) {
  (void)signo;
  _exit(0);
}

static void reap(int signo) {
  (void)signo;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

static int on(int signo, void (*handler)(int), int flags) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = handler;
  action.sa_flags = flags;
  sigemptyset(&action.sa_mask);
  return sigaction(signo, &action, NULL);
}

int main(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
    puts("pause (capi-dns)");
    return 0;
  }
  if (getpid() != 1) fprintf(stderr, "pause: warning: not PID 1, zombies of this namespace are not mine\n");
  if (on(SIGINT, stop, 0) < 0 || on(SIGTERM, stop, 0) < 0 || on(SIGCHLD, reap, SA_NOCLDSTOP) < 0) {
    perror("pause: sigaction");
    return 1;
  }
  for (;;) pause();
}
