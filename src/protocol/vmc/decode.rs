//! VMC datagrams into events in internal axes (`decode`): a bundle or a bare
//! message, each message one `VmcEvent`, unknown addresses ignored as the spec
//! asks, malformed messages counted in `DecodeStats` and dropped without losing
//! the rest of the datagram. Allocation-free and tuned for bone messages, most of
//! the traffic (`benches/vmc.rs`).

use glam::{Quat, Vec3};

use super::names::{NAME_BYTES, bone_from_unity_bytes, bone_from_words};
use super::{to_unity_position, to_unity_rotation};
use crate::humanoid::HumanBone;
use crate::protocol::osc::{self, Arg};

/// Which device a `/VMC/Ext/{Hmd,Con,Tra}/Pos` message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Hmd,
    Controller,
    Tracker,
}

/// One VMC message, in internal axes (glTF: right-handed, +Y up, facing +Z).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VmcEvent<'a> {
    /// `/VMC/Ext/OK`: whether the sender has an avatar loaded.
    Available { loaded: bool },
    /// `/VMC/Ext/T`: the sender's clock, seconds.
    Time(f32),
    /// `/VMC/Ext/Root/Pos`: the avatar root in the sender's world.
    Root { position: Vec3, rotation: Quat },
    /// `/VMC/Ext/Bone/Pos`: a bone's local position and rotation.
    Bone {
        bone: HumanBone,
        position: Vec3,
        rotation: Quat,
    },
    /// `/VMC/Ext/Blend/Val`.
    Blend { name: &'a str, value: f32 },
    /// `/VMC/Ext/Blend/Apply`: the blend values sent so far make one set.
    Apply,
    /// `/VMC/Ext/{Hmd,Con,Tra}/Pos` (and `/Local`): a tracked device.
    Device {
        device: Device,
        serial: &'a str,
        local: bool,
        position: Vec3,
        rotation: Quat,
    },
}

/// What one datagram held, counted by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeStats {
    /// Messages turned into events.
    pub events: u32,
    /// Messages with addresses VMC does not define here (ignored, as the spec asks).
    pub ignored: u32,
    /// Messages with missing or wrongly typed arguments, or values not finite,
    /// out of range or a zero quaternion (dropped).
    pub malformed: u32,
    /// Bone messages naming no humanoid bone (dropped).
    pub unknown_bones: u32,
    /// Broken OSC framing: truncated or garbled elements (the rest still read).
    pub broken: u32,
}

/// Largest position accepted, metres; anything farther is a broken sender.
const MAX_POSITION: f32 = 10_000.0;

/// Quaternions are accepted with lengths from 1e-3 to 1e3 (then normalized);
/// shorter ones have no reliable direction, longer ones come from a broken sender.
const MIN_QUAT_LENGTH_SQUARED: f32 = 1e-6;
const MAX_QUAT_LENGTH_SQUARED: f32 = 1e6;

/// Position and rotation from seven floats (Unity space) into internal axes; `None`
/// when not finite, out of range or a zero quaternion. Non-unit quaternions are
/// normalized.
#[inline(always)]
fn transform(f: &[f32; 7]) -> Option<(Vec3, Quat)> {
    let p = Vec3::new(f[0], f[1], f[2]);
    let q = Quat::from_xyzw(f[3], f[4], f[5], f[6]);
    // Written so that NaN fails each comparison, with no separate finiteness
    // checks: an infinite or NaN component makes the squared length so too.
    let squared = q.length_squared();
    let in_range = p.abs().cmple(Vec3::splat(MAX_POSITION)).all()
        && (MIN_QUAT_LENGTH_SQUARED..=MAX_QUAT_LENGTH_SQUARED).contains(&squared);
    if !in_range {
        return None;
    }
    Some((to_unity_position(p), to_unity_rotation(q / squared.sqrt())))
}

/// Seven floats after a leading string argument.
fn string_and_seven<'a>(args: &[Arg<'a>]) -> Option<(&'a [u8], [f32; 7])> {
    let Some(Arg::Str(name)) = args.first() else {
        return None;
    };
    let mut f = [0.0; 7];
    for (slot, arg) in f.iter_mut().zip(args.get(1..8)?) {
        match arg {
            Arg::Float(v) => *slot = *v,
            _ => return None,
        }
    }
    Some((name, f))
}

/// What one message became.
enum Outcome<'a> {
    Event(VmcEvent<'a>),
    Ignored,
    Malformed,
    UnknownBone,
}

/// A bone message's name and seven floats, as an outcome.
fn bone(name: &[u8], f: &[f32; 7]) -> Outcome<'static> {
    match (bone_from_unity_bytes(name), transform(f)) {
        (Some(bone), Some((position, rotation))) => Outcome::Event(VmcEvent::Bone {
            bone,
            position,
            rotation,
        }),
        (None, _) => Outcome::UnknownBone,
        (_, None) => Outcome::Malformed,
    }
}

/// A bone message read: its bone (`None`: unknown) and its position and rotation
/// in internal axes (`None`: malformed).
type BoneRead = (Option<HumanBone>, Option<(Vec3, Quat)>);

/// The arguments of a `/VMC/Ext/Bone/Pos` message (string, seven floats) read in
/// one go: the first 24 bytes as `NameWords`, the name ending at their first zero
/// byte, then the floats after its padding. `None` when the name is longer than any
/// bone's or the bytes are not all there: the general path then reads (and
/// counts) the message, to the same result as this one where it gives one.
// Always inlined into `decode`: returned from a call, its result goes through
// memory in pieces and is read back whole, a store-forwarding stall that cost
// more than the rest of the decoding (seen in the bench build, where `#[inline]`
// alone did not inline it).
#[inline(always)]
fn bone_in_one_go(data: &[u8]) -> Option<BoneRead> {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let Some(
        &[
            a,
            b,
            c,
            d,
            e,
            f,
            g,
            h,
            i,
            j,
            k,
            l,
            m,
            n,
            o,
            p,
            q,
            r,
            s,
            t,
            u,
            v,
            w,
            x,
        ],
    ) = data.get(..NAME_BYTES)
    else {
        return None;
    };
    let words = [
        u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        u64::from_le_bytes([i, j, k, l, m, n, o, p]),
        u64::from_le_bytes([q, r, s, t, u, v, w, x]),
    ];
    // The high bit of each zero byte, exact up to a word's first zero byte.
    let zeros = words.map(|w| w.wrapping_sub(LOW) & !w & HIGH);
    let len = match zeros {
        [z, _, _] if z != 0 => z.trailing_zeros() / 8,
        [_, z, _] if z != 0 => 8 + z.trailing_zeros() / 8,
        [_, _, z] if z != 0 => 16 + z.trailing_zeros() / 8,
        _ => return None,
    } as usize;
    // Keep the name's bytes only: padding and float bytes follow it.
    let mut name = words;
    for (k, word) in name.iter_mut().enumerate() {
        let kept = len.saturating_sub(8 * k).min(8);
        *word &= u64::MAX.checked_shr(64 - 8 * kept as u32).unwrap_or(0);
    }
    // The floats follow the name's padding. They are nearly always the last 28
    // bytes (no extra arguments): read from there, their loads need not wait for
    // the name's length; read again when they are not.
    let floats = |at: usize| {
        let mut f = [0.0; 7];
        for (f, b) in f.iter_mut().zip(data.get(at..at + 28)?.chunks_exact(4)) {
            *f = f32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        }
        Some(f)
    };
    let last = data.len().saturating_sub(28);
    let mut f = floats(last)?;
    let at = (len / 4 + 1) * 4;
    if at != last {
        f = floats(at)?;
    }
    Some((bone_from_words(name), transform(&f)))
}

/// Decodes a datagram (a bundle or a bare message) into events, in order. Unknown
/// addresses and extra arguments are ignored, as the VMC spec asks; a malformed
/// message is counted and dropped without losing the rest of the packet.
/// Allocates nothing.
pub fn decode<'a>(datagram: &'a [u8], on_event: &mut impl FnMut(VmcEvent<'a>)) -> DecodeStats {
    let mut stats = DecodeStats::default();
    for message in osc::messages(datagram) {
        let Ok(message) = message else {
            stats.broken += 1;
            continue;
        };
        // Bones are most of the traffic: one of the usual shape is read here,
        // inline, anything else by `read_message`.
        // (The event is made right where it is handed on: a merged `Outcome`
        // went through memory, which cost more than the rest of the decoding.)
        if is(message.address, b"/VMC/Ext/Bone/Pos")
            && message.tags.get(..8).is_some_and(|t| is(t, b"sfffffff"))
            && let Some((bone, transform)) = bone_in_one_go(message.data)
        {
            match (bone, transform) {
                (Some(bone), Some((position, rotation))) => {
                    stats.events += 1;
                    on_event(VmcEvent::Bone {
                        bone,
                        position,
                        rotation,
                    });
                }
                (None, _) => stats.unknown_bones += 1,
                (_, None) => stats.malformed += 1,
            }
            continue;
        }
        match read_message(message) {
            Outcome::Event(e) => {
                stats.events += 1;
                on_event(e);
            }
            Outcome::Ignored => stats.ignored += 1,
            Outcome::Malformed => stats.malformed += 1,
            Outcome::UnknownBone => stats.unknown_bones += 1,
        }
    }
    stats
}

/// `bytes == name`, compared as arrays, in a few word compares (a `match` on byte
/// strings compares byte by byte).
fn is<const N: usize>(bytes: &[u8], name: &[u8; N]) -> bool {
    <&[u8; N]>::try_from(bytes).is_ok_and(|b| b == name)
}

/// One message as an event, or why not: blend values straight from their known
/// shape, then the general argument reader.
#[inline(never)]
fn read_message(message: osc::Message<'_>) -> Outcome<'_> {
    let address = message.address;
    if is(address, b"/VMC/Ext/Bone/Pos")
        && let Some((name, f)) = message.str_and_floats::<7>()
    {
        return bone(name, &f);
    }
    if is(address, b"/VMC/Ext/Blend/Val")
        && let Some((name, [value])) = message.str_and_floats::<1>()
    {
        return match std::str::from_utf8(name) {
            Ok(name) if value.is_finite() => Outcome::Event(VmcEvent::Blend { name, value }),
            _ => Outcome::Malformed,
        };
    }
    let mut args = [Arg::Int(0); 8];
    let Ok(n) = message.args(&mut args) else {
        return Outcome::Malformed;
    };
    let args = &args[..n];
    let event = match message.address {
        b"/VMC/Ext/Bone/Pos" => match string_and_seven(args) {
            Some((name, f)) => return bone(name, &f),
            None => None,
        },
        b"/VMC/Ext/Root/Pos" => string_and_seven(args)
            .and_then(|(_, f)| transform(&f))
            .map(|(position, rotation)| VmcEvent::Root { position, rotation }),
        b"/VMC/Ext/Blend/Val" => match args {
            [name @ Arg::Str(_), Arg::Float(value), ..] if value.is_finite() => {
                name.as_str().map(|name| VmcEvent::Blend {
                    name,
                    value: *value,
                })
            }
            _ => None,
        },
        b"/VMC/Ext/Blend/Apply" => Some(VmcEvent::Apply),
        b"/VMC/Ext/T" => match args {
            [Arg::Float(t), ..] if t.is_finite() => Some(VmcEvent::Time(*t)),
            _ => None,
        },
        b"/VMC/Ext/OK" => match args {
            [Arg::Int(loaded), ..] => Some(VmcEvent::Available {
                loaded: *loaded == 1,
            }),
            _ => None,
        },
        address => {
            let device = match address {
                b"/VMC/Ext/Hmd/Pos" | b"/VMC/Ext/Hmd/Pos/Local" => Device::Hmd,
                b"/VMC/Ext/Con/Pos" | b"/VMC/Ext/Con/Pos/Local" => Device::Controller,
                b"/VMC/Ext/Tra/Pos" | b"/VMC/Ext/Tra/Pos/Local" => Device::Tracker,
                _ => return Outcome::Ignored,
            };
            string_and_seven(args).and_then(|(serial, f)| {
                let (position, rotation) = transform(&f)?;
                Some(VmcEvent::Device {
                    device,
                    serial: std::str::from_utf8(serial).ok()?,
                    local: address.ends_with(b"/Local"),
                    position,
                    rotation,
                })
            })
        }
    };
    event.map_or(Outcome::Malformed, Outcome::Event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosc::{OscMessage, OscPacket, OscType};

    use crate::formats::vrma::VrmaRest;
    use crate::humanoid::bone::ALL;
    use crate::humanoid::{CustomNames, HumanoidPose, Preset};
    use crate::protocol::vmc::{
        Datagrams, ExpressionNames, VmcEncoder, preset_from_name, unity_name,
    };

    /// A bone message's argument bytes: the name, its padding, then `floats`,
    /// then `extra` bytes.
    fn bone_data(name: &[u8], floats: &[f32], extra: &[u8]) -> Vec<u8> {
        let mut data = name.to_vec();
        data.resize((name.len() / 4 + 1) * 4, 0);
        for f in floats {
            data.extend_from_slice(&f.to_be_bytes());
        }
        data.extend_from_slice(extra);
        data
    }

    #[test]
    fn bones_read_in_one_go_read_as_the_general_reader_reads_them() {
        let unit = [0.1, 1.0, -0.2, 0.0, 0.0, 0.0, 1.0];
        let mut cases = Vec::new();
        let long = [b"x".repeat(23), b"x".repeat(24), b"x".repeat(31)];
        let mut names: Vec<&[u8]> = vec![b"", b"Tail", b"Hips\xff", &long[0], &long[1], &long[2]];
        names.extend(ALL.iter().map(|b| unity_name(*b).as_bytes()));
        for name in names {
            for floats in [
                &unit[..],
                &[f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
                &[1e30, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
                &[0.0; 7],
                &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0],
                &unit[..6],
            ] {
                for extra in [&[][..], &[0, 0, 0, 9], &[1, 2]] {
                    cases.push(bone_data(name, floats, extra));
                }
            }
        }
        // Cut-off copies of a good one.
        let good = bone_data(b"LeftUpperArm", &unit, &[]);
        cases.extend((0..good.len()).map(|n| good[..n].to_vec()));
        let mut read_in_one_go = 0;
        for data in &cases {
            let mut datagram = b"/VMC/Ext/Bone/Pos\0\0\0,sfffffff\0\0\0".to_vec();
            datagram.extend_from_slice(data);
            let Some(Ok(message)) = osc::messages(&datagram).next() else {
                panic!("{datagram:?}");
            };
            let general = message
                .str_and_floats::<7>()
                .map(|(name, f)| (bone_from_unity_bytes(name), transform(&f)));
            if let Some(fast) = bone_in_one_go(message.data) {
                assert_eq!(Some(fast), general, "{data:?}");
                read_in_one_go += 1;
            }
        }
        // The usual messages do take the fast path.
        assert!(read_in_one_go > cases.len() / 2, "{read_in_one_go}");
    }

    /// A datagram holding one message.
    fn datagram(addr: &str, args: Vec<OscType>) -> Vec<u8> {
        let addr = addr.to_owned();
        rosc::encoder::encode(&OscPacket::Message(OscMessage { addr, args })).unwrap()
    }

    fn events(bytes: &[u8]) -> (Vec<String>, DecodeStats) {
        let mut got = Vec::new();
        let stats = decode(bytes, &mut |e| got.push(format!("{e:?}")));
        (got, stats)
    }

    fn bone_args(name: &str, f: [f32; 7]) -> Vec<OscType> {
        let mut args = vec![OscType::String(name.into())];
        args.extend(f.iter().map(|v| OscType::Float(*v)));
        args
    }

    #[test]
    fn decoding_what_we_encode_gives_the_pose_back() {
        let mut names = CustomNames::default();
        let slot = names.slot_or_insert("Smirk").unwrap();
        let mut pose = crate::takes::demo::pose_at(0.7, 0.9);
        pose.expressions.set_preset(Preset::Happy, 0.75);
        pose.expressions.set_custom(slot, 0.5);
        let encoder = VmcEncoder::new(ExpressionNames::Vrm0, &VrmaRest::standard(0.9));
        let mut back = HumanoidPose::default();
        let mut blends = Vec::new();
        let mut datagrams = Datagrams::new();
        encoder.encode_into(0.7, &pose, &names, &mut datagrams);
        for d in datagrams.iter() {
            let stats = decode(d, &mut |e| match e {
                VmcEvent::Bone {
                    bone,
                    position,
                    rotation,
                } => {
                    back.set_rotation(bone, rotation);
                    if bone == HumanBone::Hips {
                        back.hips_position = position;
                    }
                }
                VmcEvent::Blend { name, value } => blends.push((name.to_owned(), value)),
                _ => {}
            });
            assert_eq!(
                (
                    stats.malformed,
                    stats.unknown_bones,
                    stats.broken,
                    stats.ignored
                ),
                (0, 0, 0, 0)
            );
        }
        for (bone, q) in pose.bones() {
            assert!(
                q.angle_between(back.rotation(bone).unwrap()) < 1e-5,
                "{bone}"
            );
        }
        assert!(back.hips_position.abs_diff_eq(pose.hips_position, 1e-6));
        assert!(blends.contains(&("Joy".to_owned(), 0.75)));
        assert_eq!(preset_from_name("Joy"), Some(Preset::Happy));
        assert_eq!(preset_from_name("blink_l"), Some(Preset::BlinkLeft));
        assert_eq!(preset_from_name("happy"), Some(Preset::Happy));
        assert_eq!(preset_from_name("Smirk"), None);
    }

    #[test]
    fn bad_messages_are_counted_and_dropped_and_the_rest_kept() {
        let unit = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let cases: Vec<(&str, Vec<u8>, DecodeStats)> = vec![
            (
                "garbage",
                b"\x00\x01garbage".to_vec(),
                DecodeStats {
                    broken: 1,
                    ..Default::default()
                },
            ),
            (
                "empty",
                Vec::new(),
                DecodeStats {
                    broken: 1,
                    ..Default::default()
                },
            ),
            (
                "NaN",
                datagram(
                    "/VMC/Ext/Bone/Pos",
                    bone_args("Hips", [f32::NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
                ),
                DecodeStats {
                    malformed: 1,
                    ..Default::default()
                },
            ),
            (
                "huge",
                datagram(
                    "/VMC/Ext/Bone/Pos",
                    bone_args("Hips", [1e30, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
                ),
                DecodeStats {
                    malformed: 1,
                    ..Default::default()
                },
            ),
            (
                "zero quaternion",
                datagram("/VMC/Ext/Bone/Pos", bone_args("Hips", [0.0; 7])),
                DecodeStats {
                    malformed: 1,
                    ..Default::default()
                },
            ),
            (
                "non-unit quaternion",
                datagram(
                    "/VMC/Ext/Bone/Pos",
                    bone_args("Hips", [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0]),
                ),
                DecodeStats {
                    events: 1,
                    ..Default::default()
                },
            ),
            (
                "unknown bone",
                datagram("/VMC/Ext/Bone/Pos", bone_args("Tail", unit)),
                DecodeStats {
                    unknown_bones: 1,
                    ..Default::default()
                },
            ),
            (
                "wrong types",
                datagram(
                    "/VMC/Ext/Bone/Pos",
                    vec![OscType::Int(3), OscType::Float(1.0)],
                ),
                DecodeStats {
                    malformed: 1,
                    ..Default::default()
                },
            ),
            (
                "extra arguments",
                datagram(
                    "/VMC/Ext/Blend/Val",
                    vec![OscType::String("A".into()), 0.5f32.into(), OscType::Int(9)],
                ),
                DecodeStats {
                    events: 1,
                    ..Default::default()
                },
            ),
            (
                "unknown address",
                datagram("/VMC/Ext/Set/Period", vec![OscType::Int(1)]),
                DecodeStats {
                    ignored: 1,
                    ..Default::default()
                },
            ),
        ];
        for (what, bytes, want) in cases {
            assert_eq!(events(&bytes).1, want, "{what}");
        }
        // A bundle whose middle message is bad and whose end is cut off: the good
        // messages before survive.
        let good = datagram("/VMC/Ext/Bone/Pos", bone_args("Spine", unit));
        let bad = datagram("/VMC/Ext/Bone/Pos", bone_args("Hips", [f32::INFINITY; 7]));
        let mut bundle = b"#bundle\0".to_vec();
        bundle.extend_from_slice(&1u64.to_be_bytes());
        for element in [&good, &bad, &good] {
            bundle.extend_from_slice(&(element.len() as u32).to_be_bytes());
            bundle.extend_from_slice(element);
        }
        let (got, stats) = events(&bundle[..bundle.len() - 5]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((stats.events, stats.malformed, stats.broken), (1, 1, 1));
        let (got, _) = events(&bundle);
        assert_eq!(got.len(), 2);
    }
}
