// Command testapp is the static test workload that berth's tests package
// FROM scratch. Its first argument picks a behaviour:
//
//	serve            HTTP on $PORT (default 8080); see handlers below
//	exit CODE [DUR]  sleep DUR (default 0) then exit with CODE
//	sleep            block until SIGTERM/SIGINT, then exit 0
//	touch PATH...    create (or append a line to) each file, exit 0
//	fill PATH BYTES  write BYTES non-zero bytes to PATH (allocated, not
//	                 sparse), print "fill: N bytes", then block as sleep
//	orphans N        leave N exited grandchildren to the PID namespace's
//	                 init, print "orphans: N made", then block as sleep
//	report [FLAG]... print one line "REPORT <json>" describing what the
//	                 process sees (see runReport), then exit or sleep
//	swap DIR REAL LINK TARGET DUR
//	                 make DIR/REAL a directory holding a file "inside" and
//	                 DIR/LINK a symlink to TARGET, exchange the two names
//	                 (renameat2 RENAME_EXCHANGE) in a loop for DUR, then
//	                 block as sleep: a subPath attacker
//	sees FILE DIR NAME...
//	                 append to FILE one line "NAME=0|1 ..." telling whether
//	                 each DIR/NAME exists, exit 0
//	grpc-health PORT [SERVICE=STATUS]...
//	                 grpc.health.v1 on PORT, "" SERVING unless given; HTTP
//	                 on $PORT sets one: /grpc-health?service=S&status=X
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
// $READY_AFTER has passed; /exit?code=N exits with N. With $LOG_USER_AGENT
// set, each path's first request with a new User-Agent prints
// "user-agent PATH: UA".
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
	case "orphans":
		n, _ := strconv.Atoi(os.Args[2])
		makeOrphans(n)
		fmt.Printf("orphans: %d made\n", n)
		waitSignal()
	case "orphan-parent":
		// The grandchild outlives this process, so it is reparented.
		if err := exec.Command("/proc/self/exe", "exit", "0", "300ms").Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "report":
		runReport(os.Args[2:])
	case "swap":
		swap(os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6])
		waitSignal()
	case "sees":
		sees(os.Args[2], os.Args[3], os.Args[4:])
	case "grpc-health":
		grpcHealth(os.Args[2], os.Args[3:])
	case "fill":
		if len(os.Args) < 4 {
			fmt.Fprintln(os.Stderr, "fill: needs PATH BYTES")
			os.Exit(2)
		}
		n, err := strconv.ParseInt(os.Args[3], 10, 64)
		if err == nil {
			err = fill(os.Args[2], n)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fill:", err)
			os.Exit(1)
		}
		fmt.Printf("fill: %d bytes\n", n)
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

// swap exchanges dir/real (a directory) and dir/link (a symlink to target)
// as fast as it can for the duration d.
func swap(dir, real, link, target, d string) {
	dur, err := time.ParseDuration(d)
	if err != nil {
		fmt.Fprintln(os.Stderr, "swap:", err)
		os.Exit(2)
	}
	a, b := filepath.Join(dir, real), filepath.Join(dir, link)
	if err := os.MkdirAll(a, 0o777); err != nil {
		fmt.Fprintln(os.Stderr, "swap:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(a, "inside"), []byte("in the volume\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "swap:", err)
		os.Exit(1)
	}
	if err := os.Symlink(target, b); err != nil && !os.IsExist(err) {
		fmt.Fprintln(os.Stderr, "swap:", err)
		os.Exit(1)
	}
	n := 0
	for end := time.Now().Add(dur); time.Now().Before(end); n++ {
		if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
			fmt.Fprintln(os.Stderr, "swap:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("swap: %d exchanges\n", n)
}

// sees appends one line to file: for each name, whether dir/name exists.
func sees(file, dir string, names []string) {
	var parts []string
	for _, n := range names {
		_, err := os.Lstat(filepath.Join(dir, n))
		parts = append(parts, fmt.Sprintf("%s=%d", n, map[bool]int{true: 1, false: 0}[err == nil]))
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sees:", err)
		os.Exit(1)
	}
	defer f.Close()
	fmt.Fprintln(f, strings.Join(parts, " "))
}

// fill writes n bytes of 'x' to path and syncs it.
func fill(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := []byte(strings.Repeat("x", 64<<10))
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := f.Write(buf[:k]); err != nil {
			f.Close()
			return err
		}
		n -= k
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// makeOrphans runs n children that each start a grandchild and exit at
// once, then waits until the grandchildren have exited.
func makeOrphans(n int) {
	for range n {
		if err := exec.Command("/proc/self/exe", "orphan-parent").Run(); err != nil {
			fmt.Fprintln(os.Stderr, "orphan-parent:", err)
			os.Exit(1)
		}
	}
	time.Sleep(time.Second)
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
	mux.HandleFunc("/wait", waitFile)
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(r.URL.Query().Get("path"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Write(b)
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
	var handler http.Handler = mux
	if os.Getenv("LOG_USER_AGENT") != "" {
		handler = logUserAgents(mux)
	}
	srv := &http.Server{Addr: ":" + port, Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		waitSignal()
		srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// logUserAgents prints "user-agent PATH: UA" the first time a request
// for PATH comes with User-Agent UA (a probe's, say), then serves it.
func logUserAgents(next http.Handler) http.Handler {
	var mu sync.Mutex
	seen := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := fmt.Sprintf("user-agent %s: %s", r.URL.Path, strings.Join(r.Header.Values("User-Agent"), ", "))
		mu.Lock()
		if !seen[line] {
			seen[line] = true
			fmt.Println(line)
		}
		mu.Unlock()
		next.ServeHTTP(w, r)
	})
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

// Report is what `testapp report` prints, as JSON on one line after the
// marker "REPORT ", so tests can check a pod spec's effect from inside the
// container. Errors are recorded as values, never fatal.
type Report struct {
	Args         []string            `json:"args"`
	Env          []string            `json:"env"`
	UID          int                 `json:"uid"`
	GID          int                 `json:"gid"`
	Groups       []int               `json:"groups"`
	Hostname     string              `json:"hostname"`
	RootWritable bool                `json:"rootWritable"` // creating /rofs-probe worked
	RootWriteErr string              `json:"rootWriteErr,omitempty"`
	NoNewPrivs   string              `json:"noNewPrivs"`  // the NoNewPrivs value in /proc/self/status
	OOMScoreAdj  string              `json:"oomScoreAdj"` // /proc/self/oom_score_adj
	IPCNamespace string              `json:"ipcNamespace"`
	Cgroup       map[string]string   `json:"cgroup"`           // normalized keys, see readCgroup
	Files        map[string]string   `json:"files,omitempty"`  // --cat PATH: content or "ERROR: ..."
	Stats        map[string]FileStat `json:"stats,omitempty"`  // --stat PATH
	Writes       map[string]string   `json:"writes,omitempty"` // --write PATH=CONTENT: "" or the error
	Statfs       map[string]string   `json:"statfs,omitempty"` // --statfs PATH: f_type in hex or "ERROR: ..."
	Waited       map[string]bool     `json:"waited,omitempty"` // --wait PATH: whether it appeared in time
}

// FileStat is a path's lstat, or Err.
type FileStat struct {
	Mode  string `json:"mode"` // os.FileMode.String(), e.g. "dgrwxrwxrwx"
	Perm  uint32 `json:"perm"` // permission plus setuid/setgid/sticky bits, as in chmod
	UID   int    `json:"uid"`
	GID   int    `json:"gid"`
	IsDir bool   `json:"isDir"`
	Size  int64  `json:"size"`
	Err   string `json:"err,omitempty"`
}

// runReport implements:
//
//	report [--wait PATH]... [--write PATH=CONTENT]... [--cat PATH]...
//	       [--stat PATH]... [--statfs PATH]... [--termination-message TEXT]
//	       [--exit CODE] [--sleep] [ANY]...
//
// in that order of effect: wait (up to 30 s each) for the files to exist,
// do the writes, gather the report, print it, write TEXT to
// /dev/termination-log, then block until SIGTERM (--sleep) or exit with
// CODE (default 0). Other arguments are ignored (they show in args).
func runReport(args []string) {
	var waits, writes, cats, stats, statfs []string
	termMsg, hasTermMsg, code, sleep := "", false, 0, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 >= len(args) {
				fmt.Fprintf(os.Stderr, "report: %s needs a value\n", a)
				os.Exit(2)
			}
			i++
			return args[i]
		}
		switch a {
		case "--wait":
			waits = append(waits, next())
		case "--write":
			writes = append(writes, next())
		case "--cat":
			cats = append(cats, next())
		case "--stat":
			stats = append(stats, next())
		case "--statfs":
			statfs = append(statfs, next())
		case "--termination-message":
			termMsg, hasTermMsg = next(), true
		case "--exit":
			code, _ = strconv.Atoi(next())
		case "--sleep":
			sleep = true
		}
	}
	r := Report{Args: os.Args, Env: os.Environ(), UID: os.Getuid(), GID: os.Getgid()}
	r.Groups, _ = os.Getgroups()
	r.Hostname, _ = os.Hostname()
	if len(waits) > 0 {
		r.Waited = map[string]bool{}
		for _, p := range waits {
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err := os.Stat(p); err == nil {
					r.Waited[p] = true
					break
				}
				if time.Now().After(deadline) {
					r.Waited[p] = false
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	if len(writes) > 0 {
		r.Writes = map[string]string{}
		for _, w := range writes {
			p, content, _ := strings.Cut(w, "=")
			r.Writes[p] = ""
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				r.Writes[p] = err.Error()
			}
		}
	}
	if f, err := os.OpenFile("/rofs-probe", os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		f.Close()
		os.Remove("/rofs-probe")
		r.RootWritable = true
	} else {
		r.RootWriteErr = err.Error()
	}
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(line, "NoNewPrivs:"); ok {
				r.NoNewPrivs = strings.TrimSpace(v)
			}
		}
	}
	if b, err := os.ReadFile("/proc/self/oom_score_adj"); err == nil {
		r.OOMScoreAdj = strings.TrimSpace(string(b))
	}
	r.IPCNamespace, _ = os.Readlink("/proc/self/ns/ipc")
	r.Cgroup = readCgroup()
	if len(cats) > 0 {
		r.Files = map[string]string{}
		for _, p := range cats {
			b, err := os.ReadFile(p)
			if err != nil {
				r.Files[p] = "ERROR: " + err.Error()
				continue
			}
			r.Files[p] = string(b)
		}
	}
	if len(stats) > 0 {
		r.Stats = map[string]FileStat{}
		for _, p := range stats {
			var fs FileStat
			if fi, err := os.Lstat(p); err != nil {
				fs.Err = err.Error()
			} else {
				fs.Mode, fs.IsDir, fs.Size = fi.Mode().String(), fi.IsDir(), fi.Size()
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					fs.UID, fs.GID, fs.Perm = int(st.Uid), int(st.Gid), st.Mode&0o7777
				}
			}
			r.Stats[p] = fs
		}
	}
	if len(statfs) > 0 {
		r.Statfs = map[string]string{}
		for _, p := range statfs {
			var st syscall.Statfs_t
			if err := syscall.Statfs(p, &st); err != nil {
				r.Statfs[p] = "ERROR: " + err.Error()
				continue
			}
			r.Statfs[p] = fmt.Sprintf("0x%x", st.Type)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	fmt.Printf("REPORT %s\n", b)
	os.Stdout.Sync()
	if hasTermMsg {
		if err := os.WriteFile("/dev/termination-log", []byte(termMsg), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "report: termination message:", err)
		}
	}
	if sleep {
		waitSignal()
		return
	}
	os.Exit(code)
}

// readCgroup reads the container's own memory and CPU limits from
// /sys/fs/cgroup under either layout, with normalized keys:
//
//	version      "1" or "2"
//	memory.max   bytes or "max" (v1 memory.limit_in_bytes; v1 prints
//	             unlimited as a huge number)
//	memsw.max    v1 only: memory.memsw.limit_in_bytes (memory+swap)
//	swap.max     v2 only: memory.swap.max (swap alone)
//	cpu.quota    microseconds per period, or "max" (v1 cpu.cfs_quota_us, -1 = max)
//	cpu.period   microseconds
//	cpu.shares   v1 only: cpu.shares
//	cpu.weight   v2 only: cpu.weight
//
// A missing file gives "ERROR: ...".
func readCgroup() map[string]string {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return "ERROR: " + err.Error()
		}
		return strings.TrimSpace(string(b))
	}
	out := map[string]string{}
	var st syscall.Statfs_t
	const cgroup2Magic = 0x63677270
	if err := syscall.Statfs("/sys/fs/cgroup", &st); err == nil && st.Type == cgroup2Magic {
		out["version"] = "2"
		out["memory.max"] = read("/sys/fs/cgroup/memory.max")
		out["swap.max"] = read("/sys/fs/cgroup/memory.swap.max")
		cpuMax := read("/sys/fs/cgroup/cpu.max")
		if q, p, ok := strings.Cut(cpuMax, " "); ok {
			out["cpu.quota"], out["cpu.period"] = q, p
		} else {
			out["cpu.quota"], out["cpu.period"] = cpuMax, cpuMax
		}
		out["cpu.weight"] = read("/sys/fs/cgroup/cpu.weight")
		return out
	}
	out["version"] = "1"
	out["memory.max"] = read("/sys/fs/cgroup/memory/memory.limit_in_bytes")
	out["memsw.max"] = read("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes")
	out["cpu.quota"] = read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
	if out["cpu.quota"] == "-1" {
		out["cpu.quota"] = "max"
	}
	out["cpu.period"] = read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
	out["cpu.shares"] = read("/sys/fs/cgroup/cpu/cpu.shares")
	return out
}
