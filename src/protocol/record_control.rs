//! The bridge's own recording control over OSC: `/bridge/record/start [name]
//! [performer]` and `/bridge/record/stop [performer]`, accepted on the VMC and lab
//! OSC ports among the addresses those protocols do not define. Pure: the input
//! tasks pass what `RecordRequest::from_message` reads on to the recorder.

use std::net::SocketAddr;

use serde::Deserialize;

use super::osc::{Arg, Message};

/// Whose `/bridge/record/*` commands an input port obeys. OSC has no token, and a
/// port open to the network would let anyone on it start and stop recordings: by
/// default only programs on this machine may.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordCommandsFrom {
    /// Senders on this machine (a loopback address).
    #[default]
    Loopback,
    /// Any sender that reaches the port.
    Any,
    /// Nobody: the commands are ignored.
    Off,
}

impl RecordCommandsFrom {
    /// Whether a command from `sender` is obeyed.
    #[must_use]
    pub fn allows(self, sender: SocketAddr) -> bool {
        match self {
            Self::Loopback => sender.ip().is_loopback(),
            Self::Any => true,
            Self::Off => false,
        }
    }
}

/// A recording request read from one OSC message. A string argument left empty
/// counts as not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordRequest<'a> {
    /// Start recording `performer` (every performer when `None`) under `name`
    /// (the recorder picks one when `None`).
    Start {
        name: Option<&'a str>,
        performer: Option<&'a str>,
    },
    /// Stop recording `performer` (every performer when `None`).
    Stop { performer: Option<&'a str> },
}

impl<'a> RecordRequest<'a> {
    /// The request `message` makes; `None` when it is at another address or its
    /// arguments cannot be read.
    #[must_use]
    pub fn from_message(message: &Message<'a>) -> Option<Self> {
        let mut args = [Arg::Int(0); 2];
        let n = message.args(&mut args).ok()?;
        let text = |i: usize| {
            args[..n]
                .get(i)
                .and_then(Arg::as_str)
                .filter(|s| !s.is_empty())
        };
        match message.address {
            b"/bridge/record/start" => Some(Self::Start {
                name: text(0),
                performer: text(1),
            }),
            b"/bridge/record/stop" => Some(Self::Stop { performer: text(0) }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::osc;
    use rosc::{OscMessage, OscPacket, OscType};

    /// A datagram holding one message with string arguments.
    fn datagram(addr: &str, args: &[&str]) -> Vec<u8> {
        let args = args.iter().map(|s| OscType::String((*s).into())).collect();
        let addr = addr.into();
        rosc::encoder::encode(&OscPacket::Message(OscMessage { addr, args })).unwrap()
    }

    #[test]
    fn requests_are_read_with_empty_strings_as_not_given() {
        let start = |name, performer| Some(RecordRequest::Start { name, performer });
        let stop = |performer| Some(RecordRequest::Stop { performer });
        #[rustfmt::skip] // one line per case
        let cases = [
            ("/bridge/record/start", &[][..], start(None, None)),
            ("/bridge/record/start", &["take"], start(Some("take"), None)),
            ("/bridge/record/start", &["take", "ann"], start(Some("take"), Some("ann"))),
            ("/bridge/record/start", &["", "ann"], start(None, Some("ann"))),
            ("/bridge/record/stop", &[], stop(None)),
            ("/bridge/record/stop", &["ann"], stop(Some("ann"))),
            ("/bridge/record/stop", &[""], stop(None)),
            ("/bridge/record/pause", &[], None),
            ("/VMC/Ext/OK", &[], None),
        ];
        for (addr, args, expected) in cases {
            let bytes = datagram(addr, args);
            let message = osc::messages(&bytes).next().unwrap().unwrap();
            let request = RecordRequest::from_message(&message);
            assert_eq!(request, expected, "{addr} {args:?}");
        }
    }

    #[test]
    fn record_commands_come_from_this_machine_unless_the_port_says_otherwise() {
        let local: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let local6: SocketAddr = "[::1]:5000".parse().unwrap();
        let lan: SocketAddr = "192.168.1.20:5000".parse().unwrap();
        let by_default = RecordCommandsFrom::default();
        assert!(by_default.allows(local) && by_default.allows(local6));
        assert!(!by_default.allows(lan));
        assert!(RecordCommandsFrom::Any.allows(lan));
        assert!(!RecordCommandsFrom::Off.allows(local));
    }
}
