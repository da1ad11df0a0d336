#!/usr/bin/env python3
"""peak_rss.py OUTFILE CMD [ARGS...]: run CMD (stdin/stdout/stderr inherited), write its peak
resident set size in KiB and its wall time in seconds (one per line) to OUTFILE, and exit with
its status. Linux only.

bench/run.sh uses this when /usr/bin/time is not GNU time. It cannot just report the child's
ru_maxrss: a child forked from Python starts as a copy of the interpreter, and Linux counts
that copy's resident size (about 10 MiB) into the child's ru_maxrss when it execs, which would
hide a streaming program's 3-5 MiB. Instead the child is traced (ptrace, stopping only at its
exec and at its exit), and the peak is read from its own VmHWM in /proc/PID/status just before
it exits, when exec has reset it and the process still has its memory. Where tracing is not
allowed, VmHWM is polled instead (which can miss a peak in the last few milliseconds).
"""

import ctypes
import os
import signal
import sys
import threading
import time

PTRACE_TRACEME, PTRACE_CONT, PTRACE_SETOPTIONS = 0, 7, 0x4200
PTRACE_O_TRACEEXIT, PTRACE_O_EXITKILL = 0x40, 0x100000
PTRACE_EVENT_EXIT = 6


def vm_hwm(pid):
    """The process's peak RSS in KiB, or None once it has released its memory."""
    try:
        with open("/proc/%d/status" % pid, "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def ptrace_fn():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        f = libc.ptrace
    except (OSError, AttributeError):
        return None
    f.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    f.restype = ctypes.c_long
    return f


def traced(pid, ptrace):
    """Wait for a traced child; returns (status, rusage, peak KiB)."""
    peak = None
    _, status, ru = os.wait4(pid, 0)  # stopped by the SIGTRAP that follows its exec
    if not os.WIFSTOPPED(status):  # the exec failed
        return status, ru, peak
    ptrace(PTRACE_SETOPTIONS, pid, None, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)
    ptrace(PTRACE_CONT, pid, None, None)
    while True:
        _, status, ru = os.wait4(pid, 0)
        if not os.WIFSTOPPED(status):
            return status, ru, peak
        sig = os.WSTOPSIG(status)
        if sig == signal.SIGTRAP and status >> 16 == PTRACE_EVENT_EXIT:
            peak = vm_hwm(pid)  # exiting, but its memory is still there
            sig = 0
        ptrace(PTRACE_CONT, pid, None, sig)  # pass any other signal on


def polled(pid):
    """Wait for an untraced child, polling its VmHWM; returns (status, rusage, peak KiB)."""
    peak = [vm_hwm(pid)]
    done = threading.Event()

    def poll():
        delay = 0.0002
        while not done.is_set():
            hwm = vm_hwm(pid)
            if hwm is not None:
                peak[0] = max(peak[0] or 0, hwm)
            done.wait(delay)
            delay = min(delay * 2, 0.005)

    t = threading.Thread(target=poll, daemon=True)
    t.start()
    _, status, ru = os.wait4(pid, 0)
    done.set()
    t.join()
    return status, ru, peak[0]


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    ptrace = ptrace_fn()
    # The child reports on a close-on-exec pipe whether it is traced ("T"/"N"), then
    # execs; an exec error follows as text. EOF means the exec happened.
    r, w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        ok = ptrace is not None and ptrace(PTRACE_TRACEME, 0, None, None) == 0
        os.write(w, b"T" if ok else b"N")
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            os.write(w, str(e).encode())
        os._exit(127)
    os.close(w)
    msg = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        msg += chunk
    os.close(r)
    if msg[1:]:
        sys.stderr.write("peak_rss.py: %s: %s\n" % (cmd[0], msg[1:].decode(errors="replace")))
    status, ru, peak = traced(pid, ptrace) if msg[:1] == b"T" else polled(pid)
    secs = time.perf_counter() - t0
    with open(out, "w") as f:
        # without /proc, only ru_maxrss is left: an overestimate (see above)
        f.write("%d\n%.6f\n" % (peak if peak is not None else ru.ru_maxrss, secs))
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
