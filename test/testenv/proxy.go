package main

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// stableProxy keeps one 127.0.0.1 port for a cluster across restarts of its
// API server, which picks a new port each time it starts. While the API
// server is stopped the port is closed, so clients see "connection refused"
// exactly as with a real control plane that is down.
type stableProxy struct {
	port int

	mu      sync.Mutex
	ln      net.Listener
	backend int
	conns   map[net.Conn]struct{}
}

func newStableProxy() (*stableProxy, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return &stableProxy{port: port, conns: map[net.Conn]struct{}{}}, nil
}

func (p *stableProxy) open(backend int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p.port))
	if err != nil {
		return err
	}
	p.ln, p.backend = ln, backend
	go p.accept(ln, backend)
	return nil
}

func (p *stableProxy) accept(ln net.Listener, backend int) {
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		go p.relay(client, backend)
	}
}

func (p *stableProxy) relay(client net.Conn, backend int) {
	server, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", backend))
	if err != nil {
		client.Close()
		return
	}
	if !p.track(client, server) {
		client.Close()
		server.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	<-done
	client.Close()
	server.Close()
	p.untrack(client, server)
}

func (p *stableProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *stableProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// shut closes the port and cuts every open connection, as a dying API
// server would: watches end and clients have to reconnect.
func (p *stableProxy) shut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *stableProxy) close() { p.shut() }
