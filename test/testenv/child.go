package main

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a process the environment started (containerd, kubelet,
// kube-proxy, controller-manager, scheduler), its output in a log file.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startChild runs argv with stdout and stderr appended to logPath; in the
// network namespace netns when it is not empty. nsenter --net, not
// `ip netns exec`: the latter also unshares the mount namespace and mounts a
// fresh /sys, which hides the cgroup v1 mounts from kubelet ("failed to find
// cgroup mounts").
func startChild(name, logPath, netns string, argv ...string) (*child, error) {
	if netns != "" {
		argv = append([]string{"nsenter", "--net=" + netnsPath(netns), "--"}, argv...)
	}
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", name, err)
	}
	defer out.Close()
	fmt.Fprintf(out, "--- %s %s\n", time.Now().Format(time.RFC3339), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	// Killed with us if we die without stopping it (SIGKILL, a crash); what it
	// leaves behind, the next environment in the same slot removes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL after grace, and waits for the exit.
func (c *child) stop(grace time.Duration) {
	if c == nil || c.exited() {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// restarting keeps a node daemon running as systemd's Restart=always does on
// a real node: a kube-proxy or kubelet that exits (its log says why, in the
// environment's log too) is started again a second later, until stop.
type restarting struct {
	name, logPath, netns string
	argv                 []string

	mu      sync.Mutex
	current *child
	stopped bool
}

func startRestarting(name, logPath, netns string, argv ...string) (*restarting, error) {
	r := &restarting{name: name, logPath: logPath, netns: netns, argv: argv}
	c, err := startChild(name, logPath, netns, argv...)
	if err != nil {
		return nil, err
	}
	r.current = c
	go r.watch(c)
	return r, nil
}

func (r *restarting) watch(c *child) {
	for {
		<-c.done
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		log.Printf("%s exited (%v), starting it again; its log ends:\n%s", r.name, c.err, tailOf(r.logPath, 10))
		time.Sleep(time.Second)
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return
		}
		next, err := startChild(r.name, r.logPath, r.netns, r.argv...)
		if err != nil {
			r.mu.Unlock()
			log.Printf("%s: %v", r.name, err)
			return
		}
		r.current = next
		r.mu.Unlock()
		c = next
	}
}

func (r *restarting) stop(grace time.Duration) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.stopped = true
	c := r.current
	r.mu.Unlock()
	c.stop(grace)
}

// run runs a short command and returns its error with its output.
func run(argv ...string) error {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// runIn runs a short command in the network namespace netns.
func runIn(netns string, argv ...string) error {
	return run(append([]string{"nsenter", "--net=" + netnsPath(netns), "--"}, argv...)...)
}

func netnsPath(name string) string { return "/run/netns/" + name }
