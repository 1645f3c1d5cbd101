// Command app answers GET / with the version it was built as, and GET /healthz with "ok", on port 8080 or
// on $PORT (so two of its containers can share a pod), and says so on stdout (its container log).
// `app get <url>` prints the body of GET <url> instead (run in a container with exec, it shows that one
// pod reaches another). With $SLEEP_THEN_EXIT (a Go duration) it only sleeps that long and exits 0: an init
// container that makes its pod slow to start.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// version is set at link time (-X main.version=v1).
var version = "dev"

func main() {
	if len(os.Args) == 3 && os.Args[1] == "get" {
		os.Exit(get(os.Args[2]))
	}
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
	fmt.Printf("app %s listening on :%s\n", version, port)
	if err := server.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// get prints the body of GET url; a failure or a status other than 200 exits 1.
func get(url string) int {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer resp.Body.Close()
	if _, err := io.Copy(os.Stdout, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "GET", url, resp.Status, err)
		return 1
	}
	return 0
}
