// Command testapp is the static test workload that berth's tests package
// FROM scratch. Its first argument picks a behaviour:
//
//	serve            HTTP on $PORT (default 8080); see handlers below
//	exit CODE [DUR]  sleep DUR (default 0) then exit with CODE
//	sleep            block until SIGTERM/SIGINT, then exit 0
//	touch PATH...    create (or append a line to) each file, exit 0
//
// Modes for exec, which print no start banner (their output is exact):
//
//	cat              copy stdin to stdout; at EOF write "cat: N bytes" to stderr
//	isatty           print "stdin=B stdout=B stderr=B" (whether each is a terminal)
//	size             print "size WxH" of the terminal at start and on every
//	                 SIGWINCH, until a line "q" or EOF on stdin
//	getenv NAME      print the value of $NAME
//
// Under serve: GET / answers $MESSAGE (or "hello"); /env?name=X answers the
// value of X; /get?url=U fetches U and answers its body (for pod-localhost
// checks); /healthz answers 200 unless the file $UNHEALTHY_FILE exists or
// $HEALTHZ_FAIL_AFTER has passed since start; /ready answers 503 until
// $READY_AFTER has passed; /exit?code=N exits with N.
package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

func main() {
	mode := "serve"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if run, ok := execModes[mode]; ok {
		run(os.Args[2:])
		return
	}
	fmt.Printf("testapp %s starting\n", mode)
	fmt.Fprintf(os.Stderr, "testapp %s stderr\n", mode)
	switch mode {
	case "serve":
		serve()
	case "exit":
		code := 0
		if len(os.Args) > 2 {
			code, _ = strconv.Atoi(os.Args[2])
		}
		if len(os.Args) > 3 {
			if d, err := time.ParseDuration(os.Args[3]); err == nil {
				time.Sleep(d)
			}
		}
		os.Exit(code)
	case "sleep":
		waitSignal()
	case "touch":
		for _, path := range os.Args[2:] {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Fprintln(f, time.Now().UTC().Format(time.RFC3339Nano))
			f.Close()
		}
	default:
		fmt.Fprintf(os.Stderr, "testapp: unknown mode %q\n", mode)
		os.Exit(2)
	}
}

func waitSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
}

func serve() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		msg := os.Getenv("MESSAGE")
		if msg == "" {
			msg = "hello"
		}
		fmt.Fprint(w, msg)
	})
	mux.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, os.Getenv(r.URL.Query().Get("name")))
	})
	mux.HandleFunc("/get", func(w http.ResponseWriter, r *http.Request) {
		c := http.Client{Timeout: 3 * time.Second}
		resp, err := c.Get(r.URL.Query().Get("url"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
	started := time.Now()
	after := func(env string) bool {
		d, err := time.ParseDuration(os.Getenv(env))
		return err == nil && time.Since(started) >= d
	}
	mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		if os.Getenv("READY_AFTER") != "" && !after("READY_AFTER") {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ready")
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if after("HEALTHZ_FAIL_AFTER") {
			http.Error(w, "unhealthy", http.StatusInternalServerError)
			return
		}
		if f := os.Getenv("UNHEALTHY_FILE"); f != "" {
			if _, err := os.Stat(f); err == nil {
				http.Error(w, "unhealthy", http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("/exit", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		fmt.Fprint(w, "bye")
		go func() { time.Sleep(50 * time.Millisecond); os.Exit(code) }()
	})
	srv := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		waitSignal()
		srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var execModes = map[string]func(args []string){
	"cat": func([]string) {
		n, err := io.Copy(os.Stdout, os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cat:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "cat: %d bytes\n", n)
	},
	"isatty": func([]string) {
		fmt.Printf("stdin=%t stdout=%t stderr=%t\n", term.IsTerminal(0), term.IsTerminal(1), term.IsTerminal(2))
	},
	"size": func([]string) {
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		quit := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(os.Stdin)
			for sc.Scan() && strings.TrimSpace(sc.Text()) != "q" {
			}
			close(quit)
		}()
		for {
			w, h, _ := term.GetSize(1)
			fmt.Printf("size %dx%d\n", w, h)
			select {
			case <-winch:
			case <-quit:
				return
			}
		}
	},
	"getenv": func(args []string) {
		if len(args) > 0 {
			fmt.Println(os.Getenv(args[0]))
		}
	},
}
