//! The harness's `redis-server`: on a free port of 127.0.0.1, without persistence, killed and
//! waited for by its PID when dropped (the run ended, failed or was interrupted), and the
//! faults of the timeline: `SIGSTOP`, `SIGCONT`, `SIGKILL`, a restart empty on the same port,
//! `FLUSHALL`, and the keys of [`UNHEARD_USER`] taken away and given back (partial write
//! failure).

use std::io;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::resp::{self, Reply};

/// How long a new server may take to answer `PING`.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the harness waits for the server's answer to its own commands: a stopped server
/// costs this much, once a second.
pub const COMMAND_TIMEOUT: Duration = Duration::from_millis(250);

/// The ACL user of the clients whose syncs `writes-fail` refuses (the later half), with
/// every command and, but during that fault, every key.
pub const UNHEARD_USER: &str = "harness-unheard";

/// [`UNHEARD_USER`]'s password (a loopback server of the harness's own).
const UNHEARD_PASSWORD: &str = "unheard";

/// A running (or stopped, or killed) `redis-server` of the harness's own.
#[derive(Debug)]
pub struct RedisProcess {
    program: PathBuf,
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl RedisProcess {
    /// Starts `program` (`redis-server`) on a free port of 127.0.0.1 and waits until it answers
    /// `PING`. A program that cannot be run is an error saying how to install one.
    pub fn start(program: PathBuf) -> io::Result<Self> {
        let port = TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port();
        let dir = std::env::temp_dir().join(format!("fleet-harness-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let mut server = Self {
            program,
            child: None,
            port,
            dir,
        };
        server.spawn()?;
        Ok(server)
    }

    fn spawn(&mut self) -> io::Result<()> {
        let child = Command::new(&self.program)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| {
                io::Error::new(
                    error.kind(),
                    format!(
                        "cannot run {}: {error} (install Redis with `apt-get install \
                         redis-server`, name another with --redis-server, or run local phases \
                         only)",
                        self.program.display()
                    ),
                )
            })?;
        self.child = Some(child);
        self.wait_ready()?;
        let password = format!(">{UNHEARD_PASSWORD}");
        let user = ["reset", "on", &password, "~*", "&*", "+@all"];
        self.expect_ok(&[["ACL", "SETUSER", UNHEARD_USER].as_slice(), &user].concat())
    }

    fn wait_ready(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Reply::Status(pong)) = self.command(&["PING"])
                && pong == "PONG"
            {
                return Ok(());
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|child| child.try_wait().ok())
                .flatten()
            {
                return Err(io::Error::other(format!(
                    "redis-server on port {} exited at start ({status})",
                    self.port
                )));
            }
            if Instant::now() > deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "redis-server on port {} did not answer PING within {START_TIMEOUT:?}",
                        self.port
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// [`url`](Self::url) as [`UNHEARD_USER`].
    pub fn unheard_url(&self) -> String {
        format!(
            "redis://{UNHEARD_USER}:{UNHEARD_PASSWORD}@127.0.0.1:{}/",
            self.port
        )
    }

    /// `writes-fail`: [`UNHEARD_USER`] loses every key (its scripts are refused).
    pub fn fail_unheard_writes(&self) -> io::Result<()> {
        self.expect_ok(&["ACL", "SETUSER", UNHEARD_USER, "resetkeys"])
    }

    /// `writes-resume`: [`UNHEARD_USER`] has every key again.
    pub fn resume_unheard_writes(&self) -> io::Result<()> {
        self.expect_ok(&["ACL", "SETUSER", UNHEARD_USER, "~*"])
    }

    /// The server's port on 127.0.0.1 (the same after a restart).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id (`None` once killed).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `SIGSTOP`: connections stay open, nothing is answered.
    pub fn pause(&self) -> io::Result<()> {
        self.signal("STOP")
    }

    /// `SIGCONT`.
    pub fn resume(&self) -> io::Result<()> {
        self.signal("CONT")
    }

    /// `SIGKILL`, then waits for the process.
    pub fn kill(&mut self) -> io::Result<()> {
        match self.child.take() {
            Some(mut child) => {
                // Killing a process that already exited fails; waiting is all that is left.
                let _ = child.kill();
                child.wait().map(drop)
            }
            None => Ok(()),
        }
    }

    /// Kills the server if it runs and starts a new, empty one on the same port.
    pub fn restart_empty(&mut self) -> io::Result<()> {
        self.kill()?;
        self.spawn()
    }

    /// `FLUSHALL`: every key gone (the script cache stays: `FLUSHALL` does not touch it).
    pub fn flushall(&self) -> io::Result<()> {
        self.expect_ok(&["FLUSHALL"])
    }

    /// Readies the server for a phase, whatever the last one's faults left: running (started
    /// again if killed, continued if stopped), empty, its command counts at zero.
    pub fn prepare_phase(&mut self) -> io::Result<()> {
        match self.child {
            Some(_) => self.resume()?,
            None => self.spawn()?,
        }
        self.flushall()?;
        self.resume_unheard_writes()?;
        self.expect_ok(&["CONFIG", "RESETSTAT"])
    }

    fn command(&self, args: &[&str]) -> io::Result<Reply> {
        resp::command(self.port, args, COMMAND_TIMEOUT)
    }

    fn expect_ok(&self, args: &[&str]) -> io::Result<()> {
        match self.command(args)? {
            Reply::Status(status) if status == "OK" => Ok(()),
            other => Err(io::Error::other(format!(
                "{} answered {other:?}",
                args.join(" ")
            ))),
        }
    }

    fn signal(&self, signal: &str) -> io::Result<()> {
        let pid = self
            .pid()
            .ok_or_else(|| io::Error::other(format!("SIG{signal} to a killed redis-server")))?;
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("kill -{signal} {pid}: {status}")))
        }
    }
}

impl Drop for RedisProcess {
    fn drop(&mut self) {
        // Nothing is left to report to at drop: the server is gone either way.
        let _ = self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
