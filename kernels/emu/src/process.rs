//! The process calls a HIP application can make that the fault workloads need: `fork`, waiting
//! for children with a bound, `exit`, `exec` and `kill`. Thin wrappers over libc.

use std::time::{Duration, Instant};

/// Which side of a fork this process is on.
pub enum Forked {
    Parent(i32),
    Child,
}

/// `fork()`.
pub fn fork() -> Result<Forked, String> {
    // SAFETY: fork has no memory-safety preconditions; the child only runs code that does not
    // take the emulator's locks a parent thread could hold (see the fork workload).
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork failed: {}", std::io::Error::last_os_error())),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Code(i32),
    Signal(i32),
    /// Still running at the deadline; it was killed.
    Hung,
}

impl Ended {
    pub fn text(self) -> String {
        match self {
            Ended::Code(c) => c.to_string(),
            Ended::Signal(s) => format!("signal{s}"),
            Ended::Hung => "hung".into(),
        }
    }
}

/// Waits for `pid` until `deadline`; a child still running then is killed with SIGKILL.
pub fn wait_until(pid: i32, deadline: Instant) -> Ended {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only the status word we pass.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return if libc::WIFEXITED(status) {
                Ended::Code(libc::WEXITSTATUS(status))
            } else {
                Ended::Signal(libc::WTERMSIG(status))
            };
        }
        if r == -1 || Instant::now() >= deadline {
            // SAFETY: kill and a blocking waitpid on our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Ended::Hung;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `exit(code)`: runs the atexit handlers (the SDK's finalize, the tools' safety nets).
pub fn exit(code: i32) -> ! {
    // SAFETY: exit may be called from any thread; the handlers it runs catch their panics.
    unsafe { libc::exit(code) }
}

/// `execv("/bin/true")`; if exec fails the child leaves with `_exit(127)`, as a shell does.
pub fn exec_true() -> ! {
    let path = c"/bin/true";
    let argv = [path.as_ptr(), std::ptr::null()];
    // SAFETY: a NUL-terminated path and a NULL-terminated argv of NUL-terminated strings that
    // outlive the call; `_exit` runs no handler.
    unsafe {
        libc::execv(path.as_ptr(), argv.as_ptr());
        libc::_exit(127)
    }
}
