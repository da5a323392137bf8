package main

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// processTB adapts the testing.TB-shaped interface that the upstream test
// API server wants to a long-running process: logs go to the cluster's log
// file, cleanups run when the cluster stops.
type processTB struct {
	name string
	dir  string
	out  io.Writer

	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

func newProcessTB(name, dir string, out io.Writer) *processTB {
	return &processTB{name: name, dir: dir, out: out}
}

func (t *processTB) runCleanups() {
	t.mu.Lock()
	fns := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

func (t *processTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}
func (t *processTB) Error(args ...any) { t.Log(args...); t.Fail() }
func (t *processTB) Errorf(format string, args ...any) {
	t.Logf(format, args...)
	t.Fail()
}
func (t *processTB) Fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}
func (t *processTB) FailNow() {
	panic(fmt.Sprintf("cluster %s: fatal error in API server start-up", t.name))
}
func (t *processTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}
func (t *processTB) Fatal(args ...any)                 { t.Log(args...); t.FailNow() }
func (t *processTB) Fatalf(format string, args ...any) { t.Logf(format, args...); t.FailNow() }
func (t *processTB) Helper()                           {}
func (t *processTB) Log(args ...any)                   { fmt.Fprintln(t.out, args...) }
func (t *processTB) Logf(format string, args ...any)   { fmt.Fprintf(t.out, format+"\n", args...) }
func (t *processTB) Name() string                      { return t.name }
func (t *processTB) Setenv(key, value string)          { _ = os.Setenv(key, value) }
func (t *processTB) Skip(args ...any)                  { t.Log(args...) }
func (t *processTB) SkipNow()                          {}
func (t *processTB) Skipf(format string, args ...any)  { t.Logf(format, args...) }
func (t *processTB) Skipped() bool                     { return false }
func (t *processTB) TempDir() string                   { return t.dir }
