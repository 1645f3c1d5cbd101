// Command app answers GET / with the version it was built as, and GET /healthz with "ok", on port 8080 or
// on $PORT (so two of its containers can share a pod). With $SLEEP_THEN_EXIT (a Go duration) it only sleeps
// that long and exits 0: an init container that makes its pod slow to start.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// version is set at link time (-X main.version=v1).
var version = "dev"

func main() {
	if d := os.Getenv("SLEEP_THEN_EXIT"); d != "" {
		pause, err := time.ParseDuration(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "SLEEP_THEN_EXIT:", err)
			os.Exit(2)
		}
		time.Sleep(pause)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, version)
	})
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	server := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
