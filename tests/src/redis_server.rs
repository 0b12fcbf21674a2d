//! A `redis-server` of a test's own: on a free port of 127.0.0.1, without persistence
//! (`--save "" --appendonly no`), stopped by its PID when the guard drops (the test passed or
//! failed), and a small blocking client for the test's own commands (`FLUSHALL`, `ACL
//! SETUSER`, reading a key).
//!
//! [`RedisServer::start_tls`] adds a TLS listener on a second free port ([`ServerTls`]: the
//! server's certificate and key, the CA it checks client certificates against, whether it
//! requires them); the plain port stays open on 127.0.0.1 for the test's own commands.
//!
//! Without `redis-server` on `PATH`, [`RedisServer::start`] returns `None` and prints one line
//! (once per test binary) saying that the Redis tests were skipped and how to install Redis;
//! with `RETRY_REQUIRE_REDIS=1` (as CI sets it) a missing server fails the test instead. The
//! same holds for a `redis-server` built without TLS and [`RedisServer::start_tls`]: it is
//! recognised by the server's own refusal of the `tls-port` directive at start-up.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
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
    tls: Option<TlsListener>,
    dir: PathBuf,
}

/// What a TLS listener presents and checks (PEM texts).
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// The server's certificate (for 127.0.0.1).
    pub certificate_pem: String,
    /// Its private key.
    pub private_key_pem: String,
    /// The CA the server checks client certificates against (`--tls-ca-cert-file`).
    pub client_ca_pem: String,
    /// Whether clients must present a certificate from that CA (`--tls-auth-clients yes`).
    pub require_client_certificates: bool,
}

/// A server's TLS listener: its port and what it presents.
#[derive(Debug, Clone)]
struct TlsListener {
    port: u16,
    config: ServerTls,
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
        if !available(suite) {
            return None;
        }
        let server = with_free_ports(|| Self::try_start_on(free_port(), args));
        Some(server.unwrap_or_else(|error| panic!("{error}")))
    }

    /// Starts a server with `args` and a TLS listener presenting `tls`, on two free ports;
    /// `None` (after one line saying so) if `redis-server` is not on `PATH` or was built
    /// without TLS, and `RETRY_REQUIRE_REDIS` is not `1`.
    pub fn start_tls(suite: &str, tls: ServerTls, args: &[&str]) -> Option<Self> {
        if !available(suite) {
            return None;
        }
        let port = free_port();
        let tls_port = std::iter::repeat_with(free_port)
            .find(|&other| other != port)
            .expect("a second free port");
        let listener = TlsListener {
            port: tls_port,
            config: tls,
        };
        match Self::launch(port, owned(args), Some(listener)) {
            Ok(server) => Some(server),
            Err(log) if tls_unsupported(&log) => {
                skip_without_tls(suite, &log);
                None
            }
            Err(log) => panic!("redis-server with TLS exited at start-up:\n{log}"),
        }
    }

    /// Starts a server on `port` (to restart one where its clients expect it).
    pub fn start_on(port: u16, args: &[&str]) -> Self {
        Self::try_start_on(port, args).unwrap_or_else(|error| panic!("{error}"))
    }

    /// Starts a server on `port`: an error with the server's log if it exits at start-up.
    pub fn try_start_on(port: u16, args: &[&str]) -> Result<Self, String> {
        Self::launch(port, owned(args), None)
            .map_err(|log| format!("redis-server on port {port} exited at start-up:\n{log}"))
    }

    /// Starts a server on `port` with `args` and the TLS listener if any; its output (the log)
    /// if it exits before answering `PING`.
    fn launch(port: u16, args: Vec<String>, tls: Option<TlsListener>) -> Result<Self, String> {
        let dir = std::env::temp_dir().join(format!("retry-redis-{port}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory for redis-server");
        let log = dir.join("redis.log");
        let output = File::create(&log).expect("redis-server's log file");
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&dir);
        if let Some(listener) = &tls {
            command.args(listener.args(&dir));
        }
        let child = command
            .args(&args)
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let mut server = Self {
            child: Some(child),
            port,
            args,
            tls,
            dir,
        };
        if server.wait_ready() {
            Ok(server)
        } else {
            server.kill();
            Err(std::fs::read_to_string(&log).unwrap_or_default())
        }
    }

    /// Kills this server and starts a new, empty one on the same port(s) with the same
    /// arguments (a store restarted empty).
    pub fn restart_empty(&mut self) {
        self.kill();
        let (args, tls) = (self.args.clone(), self.tls.clone());
        *self = Self::launch(self.port, args, tls)
            .unwrap_or_else(|log| panic!("redis-server exited at restart:\n{log}"));
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

    /// `rediss://127.0.0.1:<TLS port>/` (a server made by [`start_tls`](Self::start_tls)).
    pub fn tls_url(&self) -> String {
        format!("rediss://127.0.0.1:{}/", self.tls_port())
    }

    /// `rediss://<user>:<password>@127.0.0.1:<TLS port>/` (an empty `user`: the password
    /// alone, for the default user).
    pub fn tls_url_as(&self, user: &str, password: &str) -> String {
        format!("rediss://{user}:{password}@127.0.0.1:{}/", self.tls_port())
    }

    /// The TLS listener's port (a server made by [`start_tls`](Self::start_tls)).
    pub fn tls_port(&self) -> u16 {
        self.tls
            .as_ref()
            .map(|listener| listener.port)
            .expect("a server started with start_tls")
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

    /// Waits until the server answers `PING` (true) or exits (false).
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            let exited = self
                .child
                .as_mut()
                .is_none_or(|child| child.try_wait().is_ok_and(|status| status.is_some()));
            if exited {
                return false;
            }
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                if stream.write_all(b"*1\r\n$4\r\nPING\r\n").is_ok() {
                    let mut line = String::new();
                    let mut reader = BufReader::new(stream);
                    if reader.read_line(&mut line).is_ok() && line.starts_with("+PONG") {
                        return true;
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

impl TlsListener {
    /// The listener's `redis-server` arguments, its PEM files written to `dir`.
    fn args(&self, dir: &Path) -> Vec<String> {
        let write = |name: &str, pem: &str| {
            let path = dir.join(name);
            std::fs::write(&path, pem).expect("a PEM file for redis-server");
            path.to_string_lossy().into_owned()
        };
        let auth_clients = if self.config.require_client_certificates {
            "yes"
        } else {
            "no"
        };
        vec![
            "--tls-port".to_owned(),
            self.port.to_string(),
            "--tls-cert-file".to_owned(),
            write("server.pem", &self.config.certificate_pem),
            "--tls-key-file".to_owned(),
            write("server.key", &self.config.private_key_pem),
            "--tls-ca-cert-file".to_owned(),
            write("client-ca.pem", &self.config.client_ca_pem),
            "--tls-auth-clients".to_owned(),
            auth_clients.to_owned(),
        ]
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `redis-server` can be run, for tests that start it themselves: when it cannot, one
/// line (once per test binary) saying that `suite` was skipped and how to install Redis, or a
/// failure with `RETRY_REQUIRE_REDIS=1`.
pub fn available(suite: &str) -> bool {
    let installed = redis_server_installed();
    if !installed {
        skip(suite);
    }
    installed
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

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|arg| (*arg).to_owned()).collect()
}

/// Whether a server's start-up log says it was built without TLS: Redis refuses the
/// `tls-port` directive it does not know ("Bad directive", up to 7.0), or says TLS is not
/// supported (the connection-type builds since 7.2).
fn tls_unsupported(log: &str) -> bool {
    let refused_directive = log.contains("Bad directive") && log.contains("tls-port");
    let lower = log.to_ascii_lowercase();
    refused_directive || (lower.contains("tls") && lower.contains("not supported"))
}

/// Prints once per test binary that the TLS tests were skipped, or fails under
/// `RETRY_REQUIRE_REDIS=1`: CI installs a `redis-server` with TLS, and one without must not
/// let the TLS tests pass unrun.
fn skip_without_tls(suite: &str, log: &str) {
    if std::env::var(REQUIRE_REDIS).as_deref() == Ok("1") {
        panic!(
            "{REQUIRE_REDIS}=1 but redis-server was built without TLS (install Debian's \
             redis-server, built with TLS, or build Redis with BUILD_TLS=yes):\n{log}"
        );
    }
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let line = format!(
            "note: skipped the TLS Redis tests of {suite}: this redis-server was built without \
             TLS (Debian's redis-server has it; {REQUIRE_REDIS}=1 makes this a failure)\n"
        );
        let _ = io::stderr().write_all(line.as_bytes());
    });
}

/// Prints, once per test binary and past the test harness's capture, which tests were skipped.
fn skip(suite: &str) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let line = format!(
            "note: skipped the Redis tests of {suite}: redis-server is not on PATH (install it \
             with `apt-get install redis-server`; {REQUIRE_REDIS}=1 makes this a failure)\n"
        );
        let _ = io::stderr().write_all(line.as_bytes());
    });
}

/// Sends a command to the server on `port` of 127.0.0.1 from a new connection (as the default
/// user) and reads its reply: for a thread of the test's own, which cannot hold the server.
pub fn command_at(port: u16, args: &[&str]) -> Resp {
    try_command_at(port, args)
        .unwrap_or_else(|error| panic!("{args:?} to the server on port {port}: {error}"))
}

/// [`command_at`], an error when the server cannot be reached or answers no RESP.
pub fn try_command_at(port: u16, args: &[&str]) -> io::Result<Resp> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(REPLY_TIMEOUT))?;
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(request.as_bytes())?;
    read_reply(&mut BufReader::new(stream))
}

/// How many times [`with_free_ports`] starts a server on fresh ports.
const PORT_TRIES: u32 = 5;

/// Runs `start`, which starts a server on ports it finds free, again (up to [`PORT_TRIES`]
/// times) while the server is refused a port: a port found free may be taken by another
/// socket (a connection's ephemeral port) before the server binds it. Any other error, or the
/// last one, is returned.
pub fn with_free_ports<T>(mut start: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let mut tries = 1;
    loop {
        match start() {
            Err(error) if error.contains("Address already in use") && tries < PORT_TRIES => {
                tries += 1;
            }
            outcome => return outcome,
        }
    }
}

/// A port of 127.0.0.1 that nothing listens on (the OS's choice; free when returned).
pub fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port on 127.0.0.1")
}

fn read_reply(reader: &mut impl BufRead) -> io::Result<Resp> {
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let line = line.trim_end_matches("\r\n");
    if line.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        ));
    }
    let (kind, rest) = line.split_at(1);
    let number = || {
        rest.parse::<i64>()
            .map_err(|_| invalid(format!("no number in {line:?}")))
    };
    Ok(match kind {
        "+" => Resp::Status(rest.to_owned()),
        "-" => Resp::Error(rest.to_owned()),
        ":" => Resp::Int(number()?),
        "$" if number()? < 0 => Resp::Bulk(None),
        "$" => {
            let len = usize::try_from(number()?).map_err(|_| invalid(line.to_owned()))?;
            let mut data = vec![0; len + 2];
            reader.read_exact(&mut data)?;
            data.truncate(len);
            Resp::Bulk(Some(String::from_utf8_lossy(&data).into_owned()))
        }
        "*" if number()? < 0 => Resp::Array(Vec::new()),
        "*" => (0..number()?)
            .map(|_| read_reply(reader))
            .collect::<io::Result<Vec<_>>>()?
            .into(),
        other => return Err(invalid(format!("unexpected reply type {other:?}"))),
    })
}

impl From<Vec<Resp>> for Resp {
    fn from(items: Vec<Resp>) -> Self {
        Self::Array(items)
    }
}

#[cfg(test)]
mod tests {
    use super::tls_unsupported;

    #[test]
    fn a_build_without_tls_is_told_from_a_tls_setup_that_failed() {
        // Redis 7.0 built without TLS, refusing the directive.
        let refused = "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the \
                       configuration file, at line 2\n>>> 'tls-port \"6380\"'\nBad directive or \
                       wrong number of arguments\n";
        assert!(tls_unsupported(refused));
        // A build with TLS, given a certificate it cannot load: not a reason to skip.
        let failed = "1:M 25 Nov 2026 23:59:56.067 # Failed to load certificate: /nonexist: \
                      error:80000002:system library::No such file or directory\n1:M 25 Nov 2026 \
                      23:59:56.067 # Failed to configure TLS. Check logs for more info.\n";
        assert!(!tls_unsupported(failed));
        // Another directive refused: not about TLS.
        let other = ">>> 'bogus-port \"5\"'\nBad directive or wrong number of arguments\n";
        assert!(!tls_unsupported(other));
    }
}
