//! A `redis-server` of a test's own: on a free port of 127.0.0.1, without persistence
//! (`--save "" --appendonly no`), stopped by its PID when the guard drops (the test passed or
//! failed), and a small blocking client for the test's own commands (`FLUSHALL`, `ACL
//! SETUSER`, reading a key).
//!
//! Without `redis-server` on `PATH`, [`RedisServer::start`] returns `None` and prints one line
//! (once per test binary) saying that the Redis tests were skipped and how to install Redis;
//! with `RETRY_REQUIRE_REDIS=1` (as CI sets it) a missing server fails the test instead.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

/// The environment variable that makes a missing `redis-server` a failure.
pub const REQUIRE_REDIS: &str = "RETRY_REQUIRE_REDIS";

/// How long a server may take to answer `PING` after it starts.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the test client waits for a reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// A running `redis-server`, killed (and waited for) on drop.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    args: Vec<String>,
    dir: PathBuf,
}

/// A reply to the test client's command (RESP2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    /// `+OK` and other status replies.
    Status(String),
    /// `-ERR ...`.
    Error(String),
    /// `:n`.
    Int(i64),
    /// `$n` (`None` for nil).
    Bulk(Option<String>),
    /// `*n`.
    Array(Vec<Resp>),
}

impl RedisServer {
    /// Starts a server with `args` added to the defaults, on a free port; `None` (after one
    /// line saying so, once per test binary) if `redis-server` is not on `PATH` and
    /// `RETRY_REQUIRE_REDIS` is not `1`. `suite` names the skipped tests in that line.
    pub fn start(suite: &str, args: &[&str]) -> Option<Self> {
        if !redis_server_installed() {
            skip(suite);
            return None;
        }
        let port = free_port();
        Some(Self::start_on(port, args))
    }

    /// Starts a server on `port` (to restart one where its clients expect it).
    pub fn start_on(port: u16, args: &[&str]) -> Self {
        let dir = std::env::temp_dir().join(format!("retry-redis-{port}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory for redis-server");
        let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let server = Self {
            child: Some(child),
            port,
            args,
            dir,
        };
        server.wait_ready();
        server
    }

    /// Kills this server and starts a new, empty one on the same port with the same
    /// arguments (a store restarted empty).
    pub fn restart_empty(&mut self) {
        self.kill();
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        *self = Self::start_on(self.port, &args);
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// `redis://<user>:<password>@127.0.0.1:<port>/`.
    pub fn url_as(&self, user: &str, password: &str) -> String {
        format!("redis://{user}:{password}@127.0.0.1:{}/", self.port)
    }

    /// The server's process id (`None` once killed).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // A server that already exited cannot be killed: waiting is all that is left.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Pauses the server (SIGSTOP): connections stay open, nothing is answered.
    pub fn pause(&self) {
        self.signal("STOP");
    }

    /// Resumes a paused server (SIGCONT).
    pub fn resume(&self) {
        self.signal("CONT");
    }

    /// Sends a command from a new connection (as the default user) and reads its reply.
    pub fn command(&self, args: &[&str]) -> Resp {
        command_at(self.port, args)
    }

    fn signal(&self, signal: &str) {
        let pid = self.pid().expect("a running server");
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} {pid} failed");
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                if stream.write_all(b"*1\r\n$4\r\nPING\r\n").is_ok() {
                    let mut line = String::new();
                    let mut reader = BufReader::new(stream);
                    if reader.read_line(&mut line).is_ok() && line.starts_with("+PONG") {
                        return;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!(
            "redis-server on port {} did not answer PING within {START_TIMEOUT:?}",
            self.port
        );
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `redis-server` can be run; a failure when it cannot and `RETRY_REQUIRE_REDIS=1`.
fn redis_server_installed() -> bool {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found && std::env::var(REQUIRE_REDIS).as_deref() == Ok("1") {
        panic!(
            "{REQUIRE_REDIS}=1 but redis-server is not on PATH: install it (apt-get install \
             redis-server)"
        );
    }
    found
}

/// Prints, once per test binary and past the test harness's capture, which tests were skipped.
fn skip(suite: &str) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let line = format!(
            "note: skipped the Redis tests of {suite}: redis-server is not on PATH (install it \
             with `apt-get install redis-server`; {REQUIRE_REDIS}=1 makes this a failure)\n"
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
    });
}

/// Sends a command to the server on `port` of 127.0.0.1 from a new connection (as the default
/// user) and reads its reply: for a thread of the test's own, which cannot hold the server.
pub fn command_at(port: u16, args: &[&str]) -> Resp {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connects to the server");
    stream
        .set_read_timeout(Some(REPLY_TIMEOUT))
        .expect("a read timeout");
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream
        .write_all(request.as_bytes())
        .expect("the command is sent");
    read_reply(&mut BufReader::new(stream))
}

/// A port of 127.0.0.1 that nothing listens on (the OS's choice; free when returned).
pub fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port on 127.0.0.1")
}

fn read_reply(reader: &mut impl BufRead) -> Resp {
    let mut line = String::new();
    reader.read_line(&mut line).expect("a reply line");
    let line = line.trim_end_matches("\r\n");
    let (kind, rest) = line.split_at(1);
    let number = || rest.parse::<i64>().expect("a number in the reply");
    match kind {
        "+" => Resp::Status(rest.to_owned()),
        "-" => Resp::Error(rest.to_owned()),
        ":" => Resp::Int(number()),
        "$" if number() < 0 => Resp::Bulk(None),
        "$" => {
            let len = usize::try_from(number()).expect("a length");
            let mut data = vec![0; len + 2];
            reader.read_exact(&mut data).expect("the bulk string");
            data.truncate(len);
            Resp::Bulk(Some(String::from_utf8_lossy(&data).into_owned()))
        }
        "*" if number() < 0 => Resp::Array(Vec::new()),
        "*" => (0..number())
            .map(|_| read_reply(reader))
            .collect::<Vec<_>>()
            .into(),
        other => panic!("unexpected reply type {other:?}"),
    }
}

impl From<Vec<Resp>> for Resp {
    fn from(items: Vec<Resp>) -> Self {
        Self::Array(items)
    }
}
