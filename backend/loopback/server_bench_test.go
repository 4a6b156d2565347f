package loopback

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// BenchmarkLoopbackHTTP measures one keep-alive request through the
// replay server, with every protocol event handed to (and acknowledged
// by) a stand-in for the recording loop; the baseline is a bare net/http
// server answering the same body. Compare ns/op of the two sub-benchmarks.
func BenchmarkLoopbackHTTP(b *testing.B) {
	body := "hello from replay"
	b.Run("baseline", func(b *testing.B) {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			io.WriteString(w, body)
		})}
		go srv.Serve(ln)
		defer srv.Close()
		benchGet(b, "http://"+ln.Addr().String()+"/a")
	})
	b.Run("loopback", func(b *testing.B) {
		route, _ := json.Marshal(map[string]any{"method": "GET", "path": "/a", "max_calls": MaxReplayCalls, "response": map[string]any{"body": body}})
		l := newTestServer(b, Replay{HTTP: []json.RawMessage{route}}, Limits{Connections: 1000, ProtocolBodyBytes: 1 << 20})
		done := make(chan struct{})
		go func() { // the recording loop's part: take and acknowledge
			for {
				select {
				case o := <-l.Observations():
					o.Recorded()
				case <-done:
					return
				}
			}
		}()
		l.Serve(time.Now())
		defer func() { l.Stop(); close(done) }()
		benchGet(b, "http://127.0.0.1:"+strconv.Itoa(l.Port())+"/a")
	})
}

func benchGet(b *testing.B, url string) {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
