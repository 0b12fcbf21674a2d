//! The client processes of a phase: this same binary in its client role, each killed by its
//! PID when the guard drops (the phase ended, failed or was interrupted), their per-second
//! lines read from their standard output. The client timeline starts more of them during a
//! phase, and ends the last started ones: `SIGKILL` (a crash) or `SIGTERM` (leaving), each by
//! its PID.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use crate::client::ClientOptions;
use crate::wire::ClientSecond;

/// How long a leaving client has to exit before it is killed.
const LEAVE_GRACE: Duration = Duration::from_secs(5);

/// What a client's output gave the harness.
#[derive(Debug)]
pub enum ClientLine {
    /// A second's counts.
    Second(ClientSecond),
    /// A line that is not one (the client's bug, reported with the line).
    Garbled(u32, String),
}

/// The phase's client processes.
#[derive(Debug)]
pub struct Clients {
    children: Vec<(u32, Child)>,
}

impl Clients {
    /// Starts one process per set of options, each sending its lines to `lines`.
    pub fn spawn(
        options: &[ClientOptions],
        lines: &mpsc::UnboundedSender<ClientLine>,
    ) -> Result<Self, String> {
        let mut clients = Self {
            children: Vec::with_capacity(options.len()),
        };
        for options in options {
            clients.add(options, lines)?;
        }
        Ok(clients)
    }

    /// Starts one more process.
    pub fn add(
        &mut self,
        options: &ClientOptions,
        lines: &mpsc::UnboundedSender<ClientLine>,
    ) -> Result<(), String> {
        let program = std::env::current_exe()
            .map_err(|error| format!("cannot find the harness's own binary: {error}"))?;
        {
            let mut child = Command::new(&program)
                .arg("client")
                .args(client_args(options))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                // The guard's drop kills by PID; this covers a panic in between.
                .kill_on_drop(true)
                .spawn()
                .map_err(|error| format!("cannot start client {}: {error}", options.index))?;
            let stdout = child
                .stdout
                .take()
                .ok_or_else(|| format!("client {} has no output pipe", options.index))?;
            tokio::spawn(forward_lines(options.index, stdout, lines.clone()));
            self.children.push((options.index, child));
        }
        Ok(())
    }

    /// Ends the `count` last started processes that still run: `SIGKILL` (`crash`) or
    /// `SIGTERM` (they leave cleanly and exit), each by its PID. Returns their indexes.
    pub async fn end_last(&mut self, count: u32, crash: bool) -> Result<Vec<u32>, String> {
        let keep = self.children.len().saturating_sub(count as usize);
        let ending = self.children.split_off(keep);
        let mut ended = Vec::with_capacity(ending.len());
        for (index, mut child) in ending {
            let pid = child
                .id()
                .ok_or_else(|| format!("client {index} exited before it was ended"))?;
            let signal = if crash { "-KILL" } else { "-TERM" };
            let status = Command::new("kill")
                .arg(signal)
                .arg(pid.to_string())
                .status()
                .await
                .map_err(|error| format!("kill {signal} {pid}: {error}"))?;
            if !status.success() {
                return Err(format!("kill {signal} {pid} (client {index}): {status}"));
            }
            // Reaped in the background; a leaving client that hangs is killed when dropped.
            tokio::spawn(async move {
                if tokio::time::timeout(LEAVE_GRACE, child.wait())
                    .await
                    .is_err()
                {
                    let _ = child.start_kill();
                }
            });
            ended.push(index);
        }
        Ok(ended)
    }

    /// Waits up to `timeout` for every client to exit; a client that failed or is still
    /// running then is an error (the guard kills the rest).
    pub async fn wait(mut self, timeout: Duration) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + timeout;
        for (index, child) in &mut self.children {
            match tokio::time::timeout_at(deadline, child.wait()).await {
                Ok(Ok(status)) if status.success() => {}
                Ok(Ok(status)) => return Err(format!("client {index} exited with {status}")),
                Ok(Err(error)) => return Err(format!("client {index}: {error}")),
                Err(_) => {
                    return Err(format!(
                        "client {index} still runs {timeout:?} after its phase"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Drop for Clients {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            // SIGKILL to the PID; one that already exited has nothing to kill.
            let _ = child.start_kill();
        }
    }
}

/// Reads a client's lines until its output closes.
async fn forward_lines(
    index: u32,
    stdout: tokio::process::ChildStdout,
    lines: mpsc::UnboundedSender<ClientLine>,
) {
    let mut reader = BufReader::new(stdout).lines();
    while let Ok(Some(line)) = reader.next_line().await {
        let parsed = match serde_json::from_str::<ClientSecond>(&line) {
            Ok(second) if second.client == index => ClientLine::Second(second),
            _ => ClientLine::Garbled(index, line),
        };
        if lines.send(parsed).is_err() {
            return;
        }
    }
}

/// The command line of a client.
fn client_args(options: &ClientOptions) -> Vec<String> {
    let mut args = vec![
        format!("--index={}", options.index),
        format!("--url={}", options.url),
        format!("--rate={}", options.rate),
        format!("--seconds={}", options.seconds),
        format!("--first-second={}", options.first_second),
        format!("--origin-unix-ms={}", options.origin_unix_ms),
        format!("--seed={}", options.seed),
        format!("--mode={}", options.mode.name()),
        format!("--scope={}", options.scope),
        format!("--scopes={}", options.scopes),
        format!("--max-attempts={}", options.max_attempts),
        format!("--max-wait={}ms", options.max_wait.as_secs_f64() * 1000.0),
    ];
    if let Some(spells) = options.on_off {
        args.push(format!("--on-off={spells}"));
    }
    if let Some(timeout) = options.call_timeout {
        args.push(format!(
            "--call-timeout={}ms",
            timeout.as_secs_f64() * 1000.0
        ));
    }
    if let Some(url) = &options.redis_url {
        args.push(format!("--redis-url={url}"));
    }
    if let Some(rate) = options.split_rate {
        args.push(format!("--split-rate={rate}"));
        args.push(format!("--split-burst={}", options.split_burst));
    }
    if options.watch_leases {
        args.push("--watch-leases".to_owned());
    }
    if let Some(interval) = options.sync_interval {
        args.push(format!(
            "--sync-interval={}ms",
            interval.as_secs_f64() * 1000.0
        ));
    }
    args
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::Parser;

    use super::*;
    use crate::phase_spec::Mode;
    use crate::{Cli, Command};

    #[test]
    fn a_client_reads_back_the_options_the_harness_writes() {
        let options = ClientOptions {
            index: 3,
            url: "http://127.0.0.1:9/item".to_owned(),
            rate: 12.5,
            on_off: "2s,5s".parse().ok(),
            seconds: 60,
            first_second: 20,
            origin_unix_ms: 1_000,
            seed: 7,
            mode: Mode::Fleet,
            scope: "harness".to_owned(),
            scopes: 2,
            max_attempts: 3,
            max_wait: Duration::from_millis(100),
            call_timeout: Some(Duration::from_millis(1_500)),
            redis_url: Some("redis://127.0.0.1:6379".to_owned()),
            sync_interval: Some(Duration::from_millis(271)),
            watch_leases: true,
            split_rate: None,
            split_burst: 1.0,
        };
        let args = client_args(&options);
        let cli = Cli::try_parse_from(
            ["fleet-harness", "client"]
                .into_iter()
                .map(str::to_owned)
                .chain(args),
        )
        .expect("the client parses what the harness writes");
        let Command::Client(read) = cli.command else {
            panic!("not the client role");
        };
        assert_eq!(read.on_off, options.on_off);
        assert_eq!(
            (
                read.index,
                read.rate,
                read.first_second,
                read.seed,
                read.scopes
            ),
            (3, 12.5, 20, 7, 2)
        );
        assert_eq!(read.sync_interval, options.sync_interval);
        assert_eq!(read.call_timeout, options.call_timeout);
        assert_eq!(read.redis_url, options.redis_url);
        assert!(read.watch_leases);
    }
}
