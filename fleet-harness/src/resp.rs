//! The harness's own Redis commands (`INFO commandstats`, `FLUSHALL`, `PING`): one short
//! connection per command, in RESP2, with a timeout on the connection and on the reply, so that
//! a stopped or killed server costs the harness a timeout, never a hang, and leaves no
//! connection of the harness's in the server's client list.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// A reply (RESP2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `+OK` and other status replies.
    Status(String),
    /// `-ERR ...`.
    Error(String),
    /// `:n`.
    Int(i64),
    /// `$n` (`None` for nil).
    Bulk(Option<String>),
    /// `*n`.
    Array(Vec<Reply>),
}

/// The longest reply the harness reads (`INFO commandstats` is a few kB).
const MAX_REPLY: usize = 1 << 20;

/// Sends `args` to the server on 127.0.0.1:`port` from a new connection and reads the reply,
/// each step within `timeout`.
pub fn command(port: u16, args: &[&str], timeout: Duration) -> io::Result<Reply> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&address, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.write_all(&encode(args))?;
    read_reply(&mut BufReader::new(stream))
}

/// A command as a RESP array of bulk strings.
fn encode(args: &[&str]) -> Vec<u8> {
    let mut request = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        request.extend_from_slice(format!("${}\r\n{arg}\r\n", arg.len()).as_bytes());
    }
    request
}

fn read_reply(reader: &mut impl BufRead) -> io::Result<Reply> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(invalid("the server closed the connection"));
    }
    let line = line.trim_end_matches("\r\n");
    let (kind, rest) = line
        .split_at_checked(1)
        .ok_or_else(|| invalid("an empty reply"))?;
    let number = || {
        rest.parse::<i64>()
            .map_err(|_| invalid(format!("`{rest}` is not a number")))
    };
    Ok(match kind {
        "+" => Reply::Status(rest.to_owned()),
        "-" => Reply::Error(rest.to_owned()),
        ":" => Reply::Int(number()?),
        "$" => match usize::try_from(number()?) {
            Err(_) => Reply::Bulk(None),
            Ok(len) if len > MAX_REPLY => return Err(invalid(format!("a {len}-byte reply"))),
            Ok(len) => {
                let mut data = vec![0; len + 2];
                reader.read_exact(&mut data)?;
                data.truncate(len);
                Reply::Bulk(Some(String::from_utf8_lossy(&data).into_owned()))
            }
        },
        "*" => match usize::try_from(number()?) {
            Err(_) => Reply::Array(Vec::new()),
            Ok(len) if len > MAX_REPLY => return Err(invalid(format!("a {len}-item reply"))),
            Ok(len) => Reply::Array(
                (0..len)
                    .map(|_| read_reply(reader))
                    .collect::<io::Result<_>>()?,
            ),
        },
        other => return Err(invalid(format!("unknown reply type `{other}`"))),
    })
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> io::Result<Reply> {
        read_reply(&mut BufReader::new(bytes))
    }

    #[test]
    fn commands_are_arrays_of_bulk_strings() {
        assert_eq!(
            encode(&["INFO", "commandstats"]),
            b"*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n"
        );
    }

    #[test]
    fn every_reply_type_is_read() {
        assert_eq!(
            read(b"+OK\r\n").expect("status"),
            Reply::Status("OK".into())
        );
        assert_eq!(
            read(b"-ERR no\r\n").expect("error"),
            Reply::Error("ERR no".into())
        );
        assert_eq!(read(b":42\r\n").expect("int"), Reply::Int(42));
        assert_eq!(read(b"$-1\r\n").expect("nil"), Reply::Bulk(None));
        assert_eq!(
            read(b"*2\r\n$1\r\na\r\n:1\r\n").expect("array"),
            Reply::Array(vec![Reply::Bulk(Some("a".into())), Reply::Int(1)])
        );
    }

    #[test]
    fn malformed_replies_are_errors_not_panics() {
        for bytes in [
            &b""[..],
            b"\r\n",
            b"?x\r\n",
            b":x\r\n",
            b"$5\r\nab",
            b"$99999999\r\n",
        ] {
            assert!(read(bytes).is_err(), "{bytes:?}");
        }
    }
}
