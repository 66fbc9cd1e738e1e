//! The configuration file against what it must accept and refuse.

use super::nats::is_loopback_url;
use super::*;
use crate::ik::calibration::Calibration;
use crate::ik::mocap::MocapIkConfig;

fn parse(text: &str) -> Result<BridgeConfig, String> {
    BridgeConfig::parse(Path::new("bridge.json"), text).map_err(|e| e.to_string())
}

#[test]
fn a_saved_calibration_lands_in_the_file_and_keeps_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bridge.json");
    let shipped = include_str!("../../../config/bridge.json");
    std::fs::write(&path, shipped).expect("write");
    let calibration = Calibration {
        height: 1.61,
        arm_span: 1.58,
        ..Calibration::default()
    };
    save_calibration(&path, "vr", &calibration).expect("saved");
    // Saving again replaces it; another performer is added beside it.
    save_calibration(&path, "vr", &calibration).expect("saved again");
    save_calibration(&path, "quest", &Calibration::default()).expect("saved");
    let text = std::fs::read_to_string(&path).expect("read");
    let config = BridgeConfig::load(&path).expect("still a valid configuration");
    let trackers = &config.performer_defaults.trackers;
    let vr = config.performers["vr"].apply(trackers);
    assert_eq!(vr.calibration, Some(calibration));
    // The calibration is all the entry changes: the trackers' device filter stays.
    assert_eq!(vr.device_filter, trackers.device_filter);
    assert!(vr.device_filter.is_some());
    assert_eq!(
        config.performers["quest"].apply(trackers).calibration,
        Some(Calibration::default())
    );
    // Everything else as it was: the notes and the order of the settings.
    let before: Value = serde_json::from_str(shipped).expect("json");
    let after: Value = serde_json::from_str(&text).expect("json");
    let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
    assert_eq!(keys(&before), keys(&after));
    for (key, value) in before.as_object().expect("object") {
        if key != "performers" {
            assert_eq!(&after[key], value, "{key}");
        }
    }
    // A file that is not a configuration is left alone, with a clear error.
    std::fs::write(&path, "[1, 2]").expect("write");
    let error = save_calibration(&path, "vr", &calibration).expect_err("refused");
    assert!(
        error.contains("bridge.json") && error.contains("not a JSON object"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "[1, 2]");
}

#[test]
fn the_shipped_file_spells_out_the_defaults() {
    let text = include_str!("../../../config/bridge.json");
    assert_eq!(parse(text), Ok(BridgeConfig::default()));
}

#[test]
fn a_file_that_spells_out_every_key_of_every_kind_still_loads() {
    // Every setting for every kind of source, as older configuration files
    // have them, including those a kind does not use.
    let text = include_str!("../../../tests/data/bridge-every-key.json");
    assert_eq!(parse(text), Ok(BridgeConfig::default()));
}

#[test]
fn one_setting_changes_only_that_setting() {
    let config = parse(
        r#"{"performerDefaults": {"skeleton": {"mocapIk": {"hands": false}}},
            "performers": {"alice": {"mocapIk": {"footWeight": 0.5}},
                           "bob": {"deviceFilter": null}}}"#,
    )
    .unwrap();
    let built_in = PerformerDefaults::default();
    let skeleton = &config.performer_defaults.skeleton;
    let want = MocapIkSetting {
        enabled: None,
        ik: MocapIkConfig {
            hands: false,
            ..built_in.skeleton.mocap_ik.ik
        },
    };
    assert_eq!(skeleton.mocap_ik, want);
    assert_eq!(
        skeleton.mocap_ik.enabled, None,
        "one key does not decide whether mocap IK runs"
    );
    assert_eq!(
        PerformerConfig {
            mocap_ik: built_in.skeleton.mocap_ik,
            ..skeleton.clone()
        },
        built_in.skeleton
    );
    let alice = config.performers["alice"].apply(skeleton);
    assert_eq!(
        alice.mocap_ik.ik,
        MocapIkConfig {
            foot_weight: 0.5,
            ..want.ik
        }
    );
    // `null` turns a filter off; what the entry leaves out stays.
    let bob = config.performers["bob"].apply(&config.performer_defaults.trackers);
    assert_eq!(bob.device_filter, None);
    assert_eq!(bob.vr_ik, built_in.trackers.vr_ik);
}

#[test]
fn avatars_come_from_the_performer_entry_else_the_default() {
    let config = parse(
        r#"{"avatar": "models/everyone.vrm",
            "performers": {"alice": {"avatar": "models/alice.vrm"},
                           "bob": {"filter": null}}}"#,
    )
    .unwrap();
    assert_eq!(
        config.avatar_for("alice"),
        Some(Path::new("models/alice.vrm"))
    );
    for other in ["bob", "carol"] {
        assert_eq!(
            config.avatar_for(other),
            Some(Path::new("models/everyone.vrm"))
        );
    }
    let none = parse(r#"{"performers": {"alice": {"avatar": "a.vrm"}}}"#).unwrap();
    assert_eq!(none.avatar_for("alice"), Some(Path::new("a.vrm")));
    assert_eq!(none.avatar_for("bob"), None);
    assert_eq!(BridgeConfig::default().avatar_for("alice"), None);
    // An avatar does not change the performer's other settings.
    let skeleton = &config.performer_defaults.skeleton;
    assert_eq!(config.performers["alice"].apply(skeleton), *skeleton);
}

#[test]
fn a_performers_own_avatar_comes_first_then_its_receivers_then_the_default() {
    let config = parse(
        r#"{"avatar": "everyone.vrm",
            "vmcOutputs": [{"performer": "alice", "avatar": "alice-receiver.vrm"},
                           {"performer": "bob", "avatar": "bob-receiver.vrm"},
                           {"performer": "carol"}],
            "performers": {"alice": {"avatar": "alice.vrm"}}}"#,
    )
    .unwrap();
    for (performer, want) in [
        ("alice", "alice.vrm"),
        ("bob", "bob-receiver.vrm"),
        ("carol", "everyone.vrm"),
        ("dave", "everyone.vrm"),
    ] {
        assert_eq!(
            config.avatar_for(performer),
            Some(Path::new(want)),
            "{performer}"
        );
    }
    assert_eq!(config.named_performers(), ["alice", "bob"]);
    // An output showing the first performer or all: every performer's without
    // its own, as `avatar` is; one naming a performer stays that performer's.
    for shows in ["null", r#""*""#] {
        let config = parse(&format!(
            r#"{{"vmcOutputs": [{{"performer": "bob", "avatar": "bob.vrm"}},
                               {{"performer": {shows}, "avatar": "all.vrm"}}],
                "performers": {{"alice": {{"avatar": "alice.vrm"}}}}}}"#
        ))
        .unwrap();
        assert_eq!(config.default_avatar(), Some(Path::new("all.vrm")));
        for (performer, want) in [
            ("alice", "alice.vrm"),
            ("bob", "bob.vrm"),
            ("carol", "all.vrm"),
        ] {
            assert_eq!(
                config.avatar_for(performer),
                Some(Path::new(want)),
                "{shows}"
            );
        }
    }
    // No avatar anywhere: the built-in humanoid; an output without one adds no
    // performer.
    let none = parse(r#"{"vmcOutputs": [{"performer": "alice"}]}"#).unwrap();
    assert_eq!(none.avatar_for("alice"), None);
    assert_eq!(none.default_avatar(), None);
    assert!(none.named_performers().is_empty());
}

#[test]
fn receivers_that_disagree_about_an_avatar_name_the_key() {
    for (text, expected) in [
        (
            r#"{"vmcOutputs": [{"performer": "alice", "avatar": "a.vrm"},
                               {"performer": "alice", "avatar": "b.vrm"}]}"#,
            "bridge.json: vmcOutputs[1].avatar: alice already has avatar a.vrm from vmcOutputs[0]",
        ),
        (
            r#"{"vmcOutputs": [{"avatar": "a.vrm"}, {"performer": "bob"},
                               {"performer": "*", "avatar": "b.vrm"}]}"#,
            "bridge.json: vmcOutputs[2].avatar: every performer already has avatar a.vrm from vmcOutputs[0]",
        ),
        (
            r#"{"avatar": "a.vrm", "vmcOutputs": [{"avatar": "b.vrm"}]}"#,
            "bridge.json: vmcOutputs[0].avatar: every performer already has avatar a.vrm from avatar",
        ),
    ] {
        assert_eq!(parse(text).unwrap_err(), expected, "{text}");
    }
    // The same file twice, a `./` aside, is no conflict; nor is a performer's
    // own entry, or the default, against an output naming the performer.
    for text in [
        r#"{"avatar": "m/a.vrm", "vmcOutputs": [{"avatar": "./m/a.vrm"}, {"performer": "*", "avatar": "m/./a.vrm"}]}"#,
        r#"{"vmcOutputs": [{"performer": "alice", "avatar": "a.vrm"}, {"performer": "alice", "avatar": "./a.vrm"}]}"#,
        r#"{"avatar": "all.vrm", "vmcOutputs": [{"performer": "alice", "avatar": "a.vrm"}],
            "performers": {"alice": {"avatar": "own.vrm"}}}"#,
    ] {
        assert!(parse(text).is_ok(), "{text}");
    }
    assert!(!same_avatar_file(
        Path::new("m/../a.vrm"),
        Path::new("a.vrm")
    ));
    // `run --avatar FILE` in place of `avatar`: checked again, named as such.
    let mut config = parse(r#"{"vmcOutputs": [{"avatar": "b.vrm"}]}"#).unwrap();
    config.avatar = Some("a.vrm".into());
    assert_eq!(
        config
            .check_avatars(Path::new("bridge.json"), "run --avatar")
            .unwrap_err()
            .to_string(),
        "bridge.json: vmcOutputs[0].avatar: every performer already has avatar a.vrm from run --avatar"
    );
    config.avatar = Some("./b.vrm".into());
    assert!(
        config
            .check_avatars(Path::new("bridge.json"), "run --avatar")
            .is_ok()
    );
}

#[test]
fn mocap_ik_is_on_with_an_avatar_unless_the_file_says_false() {
    let skeleton = |text: &str, performer: &str| {
        let config = parse(text).unwrap();
        let defaults = &config.performer_defaults.skeleton;
        let own = config
            .performers
            .get(performer)
            .map_or_else(|| defaults.clone(), |own| own.apply(defaults));
        let has_avatar = config.avatar_for(performer).is_some();
        own.settings(has_avatar).mocap_ik.enabled
    };
    // Built-in defaults: off on the built-in humanoid, on with an avatar.
    assert!(!skeleton("{}", "lab"));
    assert!(skeleton(r#"{"avatar": "a.vrm"}"#, "lab"));
    assert!(skeleton(
        r#"{"performers": {"lab": {"avatar": "a.vrm"}}}"#,
        "lab"
    ));
    // An avatar from a receiver counts as one, for the performer it names or
    // for every performer.
    let receiver = r#"{"vmcOutputs": [{"performer": "lab", "avatar": "a.vrm"}]}"#;
    assert!(skeleton(receiver, "lab"));
    assert!(!skeleton(receiver, "other"));
    assert!(skeleton(
        r#"{"vmcOutputs": [{"avatar": "a.vrm"}]}"#,
        "other"
    ));
    // An explicit false turns it off, for the kind or for one performer.
    let off = r#"{"avatar": "a.vrm",
        "performerDefaults": {"skeleton": {"mocapIk": {"enabled": false}}},
        "performers": {"bob": {"mocapIk": {"enabled": true}},
                       "carol": {"mocapIk": {"enabled": null}}}}"#;
    assert!(!skeleton(off, "lab"));
    assert!(skeleton(off, "bob"));
    // `null` in an entry puts the rule back.
    assert!(skeleton(off, "carol"));
    let own_off = r#"{"avatar": "a.vrm", "performers": {"lab": {"mocapIk": {"enabled": false}}}}"#;
    assert!(!skeleton(own_off, "lab"));
    assert!(skeleton(own_off, "other"));
    // An explicit true runs it on the built-in humanoid too.
    let on = r#"{"performerDefaults": {"skeleton": {"mocapIk": {"enabled": true}}}}"#;
    assert!(skeleton(on, "lab"));
}

#[test]
fn nats_entries_load_and_bad_ones_name_the_place() {
    let config = parse(
        r#"{"bridgeName": "stage", "natsOutputs": [{"prefix": "studio.mocap"}],
            "natsInputs": [{"server": "tls://hub.example:4222", "token": "t", "subjects": "mocap.room2.>"}]}"#,
    )
    .expect("valid");
    assert_eq!(config.nats_outputs[0].server().url, "nats://127.0.0.1:4222");
    assert_eq!(config.nats_inputs[0].server().token.as_deref(), Some("t"));
    for (text, expected) in [
        (
            r#"{"natsOutputs": [{"server": "nats://10.0.0.5:4222"}]}"#,
            "bridge.json: natsOutputs[0].server: nats://10.0.0.5:4222 is not on this machine: set a token, user and password, credentials or tls",
        ),
        (
            r#"{"natsInputs": [{}, {"server": "hub:4222"}]}"#,
            "bridge.json: natsInputs[1].server: hub:4222 is not on this machine: set a token, user and password, credentials or tls",
        ),
        (
            r#"{"bridgeName": "a.b", "natsOutputs": [{}]}"#,
            "bridge.json: bridgeName: may not hold spaces, dots, `*` or `>`",
        ),
        (
            r#"{"natsOutputs": [{"prefix": "mocap.*"}]}"#,
            "bridge.json: natsOutputs[0].prefix: may not hold spaces, `*` or `>`",
        ),
        (
            r#"{"natsOutputs": [{"user": "u"}]}"#,
            "bridge.json: natsOutputs[0]: user and password go together",
        ),
        (
            r#"{"natsInputs": [{"reconnectMaxS": 0}]}"#,
            "bridge.json: natsInputs[0].reconnectMaxS: must be a positive number of seconds",
        ),
    ] {
        assert_eq!(parse(text).unwrap_err(), expected, "{text}");
    }
    for url in [
        "nats://localhost:4222",
        "127.0.0.2:1",
        "nats://u:p@[::1]:4222",
        "::1",
    ] {
        assert!(is_loopback_url(url) || url == "::1", "{url}");
    }
    assert!(!is_loopback_url("nats://127.0.0.1.example:4222"));
}

#[test]
fn bad_files_name_the_place() {
    for (text, expected) in [
        (
            "{",
            "bridge.json:1:1: EOF while parsing an object at line 1 column 1",
        ),
        (
            r#"{"vmcInputs": [{"lisen": "127.0.0.1:1"}]}"#,
            "bridge.json: vmcInputs[0].lisen: unknown field `lisen`, expected one of `listen`, `performer`, `devices`, `rest`, `recordCommands`",
        ),
        (
            r#"{"vmcOutputs": [{"to": "nowhere"}]}"#,
            "bridge.json: vmcOutputs[0].to: invalid socket address syntax",
        ),
        (
            r#"{"websocket": {"listen": "0.0.0.0:8787"}}"#,
            "bridge.json: websocket.token: listening on 0.0.0.0:8787 (not a loopback address) needs a token: set websocket.token",
        ),
        (
            r#"{"recorder": {"flushMs": 500}}"#,
            "bridge.json: recorder.flushMs: 500 is not in 1..=100",
        ),
        (
            r#"{"recorder": {"maxMegabytes": 5000}}"#,
            "bridge.json: recorder.maxMegabytes: 5000 is more than a .vrma can hold (4000: a GLB is at most 4 GiB)",
        ),
        (
            r#"{"recorder": {"maxMinutes": -1}}"#,
            "bridge.json: recorder.maxMinutes: -1 is not a number of minutes ≥ 0",
        ),
        (
            r#"{"labInputs": [{"skeleton": "nope"}]}"#,
            "bridge.json: labInputs[0]: no skeleton `nope`: add it to `skeletons`",
        ),
        (
            r#"{"performers": {"alice": {"mocapIk": {"hands": 3}}}}"#,
            "bridge.json: performers.alice: mocapIk.hands: invalid type: integer `3`, expected a boolean",
        ),
        (
            r#"{"performerDefaults": {"trackers": {"vrIK": {}}}}"#,
            "bridge.json: performerDefaults.trackers: vrIK: unknown field `vrIK`, expected one of `filter`, `deviceFilter`, `mocapIk`, `vrIk`, `calibration`",
        ),
        (
            r#"{"performers": {"alice": {"mocapIk": {"enabled": 1}}}}"#,
            "bridge.json: performers.alice: mocapIk.enabled: invalid type: integer `1`, expected a boolean",
        ),
        (
            r#"{"performers": {"alice": {"avatar": 1}}}"#,
            "bridge.json: performers.alice: avatar: invalid type: integer `1`, expected path string",
        ),
        (
            r#"{"performerDefaults": {"skeleton": {"avatar": "a.vrm"}}}"#,
            "bridge.json: performerDefaults.skeleton: avatar: set the avatar at the top level or in a performer's entry",
        ),
        (
            r#"{"pipeline": {"performerTimeoutS": -1}}"#,
            "bridge.json: pipeline.performerTimeoutS: must be a positive number of seconds, at most 86400",
        ),
    ] {
        assert_eq!(parse(text).unwrap_err(), expected, "{text}");
    }
}

#[test]
fn notes_are_ignored_and_a_token_opens_other_interfaces() {
    let config = parse(
        r#"{"// a note": 1, "websocket": {"// why": "lan", "listen": "0.0.0.0:8787", "token": "s3cret"}}"#,
    )
    .unwrap();
    assert_eq!(config.websocket.unwrap().token.as_deref(), Some("s3cret"));
}

/// Numbers that would panic on a `Duration` or abort on allocation when `run`
/// starts are refused with the key instead.
#[test]
fn numbers_run_cannot_honour_are_refused_with_their_key() {
    for (text, expected) in [
        (
            r#"{"status": {"logIntervalS": 1e6}}"#,
            "bridge.json: status.logIntervalS: 1000000 is not a number of seconds from 0 to 86400",
        ),
        (
            r#"{"status": {"monitorIntervalS": -1}}"#,
            "bridge.json: status.monitorIntervalS: -1 is not a number of seconds from 0 to 86400",
        ),
        (
            r#"{"pipeline": {"performerTimeoutS": 1e30}}"#,
            "bridge.json: pipeline.performerTimeoutS: must be a positive number of seconds, at most 86400",
        ),
        (
            r#"{"vmcOutputs": [{"rateHz": 1e-30}]}"#,
            "bridge.json: vmcOutputs[0].rateHz: must be 0 (no cap) or a positive number, at least one frame a day",
        ),
        (
            r#"{"pipeline": {"inputRing": 1000000000}}"#,
            "bridge.json: pipeline.inputRing: 1000000000 is more than 65536",
        ),
        (
            r#"{"pipeline": {"recorderRing": 0}}"#,
            "bridge.json: pipeline.recorderRing: must be at least 1",
        ),
        (
            r#"{"pipeline": {"maxPerformers": 1000000000000}}"#,
            "bridge.json: pipeline.maxPerformers: 1000000000000 is more than 65536",
        ),
        (
            r#"{"websocket": {"clientQueue": 1000000000000}}"#,
            "bridge.json: websocket.clientQueue: 1000000000000 is more than 65536",
        ),
        (
            r#"{"replay": {"fps": 1e30}}"#,
            "bridge.json: replay.fps: must be a number of frames per second above 0 and at most 1000, or null",
        ),
    ] {
        assert_eq!(parse(text).unwrap_err(), expected, "{text}");
    }
    parse(r#"{"status": {"logIntervalS": 0, "monitorIntervalS": 86400}}"#).unwrap();
    parse(r#"{"replay": {"fps": 1000}}"#).unwrap();
}

/// Every key that names a performer is held to the performer name's length,
/// the error naming the file and the key.
#[test]
fn performer_names_are_checked_with_their_key() {
    let long = "x".repeat(33);
    for (text, expected) in [
        (
            r#"{"vmcInputs": [{"performer": ""}]}"#.to_owned(),
            "bridge.json: vmcInputs[0].performer: performer name `` is empty or longer than 32 bytes".to_owned(),
        ),
        (
            format!(r#"{{"vrchatInputs": [{{"performer": "{long}"}}]}}"#),
            format!("bridge.json: vrchatInputs[0].performer: performer name `{long}` is empty or longer than 32 bytes"),
        ),
        (
            r#"{"labInputs": [{"subjects": {"": "lab19"}}]}"#.to_owned(),
            "bridge.json: labInputs[0].subjects.: performer name `` is empty or longer than 32 bytes".to_owned(),
        ),
        (
            r#"{"vmcOutputs": [{"performer": ""}]}"#.to_owned(),
            "bridge.json: vmcOutputs[0].performer: performer name `` is empty or longer than 32 bytes".to_owned(),
        ),
        (
            format!(r#"{{"performers": {{"{long}": {{}}}}}}"#),
            format!("bridge.json: performers.{long}: performer name `{long}` is empty or longer than 32 bytes"),
        ),
    ] {
        assert_eq!(parse(&text).unwrap_err(), expected, "{text}");
    }
    parse(&format!(
        r#"{{"vmcOutputs": [{{"performer": "*"}}], "performers": {{"{}": {{}}}}}}"#,
        "x".repeat(32)
    ))
    .unwrap();
}

/// The solver's settings are held to the ranges configuration.md states, in the
/// kinds' defaults and in each performer's entry, the error naming the key.
#[test]
fn solver_settings_out_of_their_range_name_the_key() {
    let defaults = |kind: &str, object: &str, key: &str, value: &str| {
        format!(r#"{{"performerDefaults": {{"{kind}": {{"{object}": {{"{key}": {value}}}}}}}}}"#)
    };
    let calibration = |key: &str, value: &str| {
        format!(r#"{{"performers": {{"vr": {{"calibration": {{"{key}": {value}}}}}}}}}"#)
    };
    for (text, expected) in [
        (
            defaults("skeleton", "mocapIk", "handWeight", "2"),
            "performerDefaults.skeleton.mocapIk.handWeight: 2 is not from 0 to 1",
        ),
        (
            defaults("skeleton", "mocapIk", "footWeight", "-0.5"),
            "performerDefaults.skeleton.mocapIk.footWeight: -0.5 is not from 0 to 1",
        ),
        (
            defaults("skeleton", "mocapIk", "floorPercentile", "2"),
            "performerDefaults.skeleton.mocapIk.floorPercentile: 2 is not from 0 to 1",
        ),
        (
            defaults("skeleton", "mocapIk", "softness", "-1"),
            "performerDefaults.skeleton.mocapIk.softness: -1 is not 0 or more",
        ),
        (
            defaults("skeleton", "mocapIk", "contactRelease", "0.5"),
            "performerDefaults.skeleton.mocapIk.contactRelease: 0.5 is not 1 or more",
        ),
        (
            defaults("trackers", "vrIk", "shoulderShare", "-1"),
            "performerDefaults.trackers.vrIk.shoulderShare: -1 is not from 0 to 1",
        ),
        (
            defaults("trackers", "vrIk", "stepSeconds", "0"),
            "performerDefaults.trackers.vrIk.stepSeconds: 0 is not more than 0, at most 86400",
        ),
        (
            defaults("humanoid", "filter", "minCutoff", "-1"),
            "performerDefaults.humanoid.filter.minCutoff: -1 is not more than 0",
        ),
        (
            defaults("trackers", "deviceFilter", "noiseM", "-1"),
            "performerDefaults.trackers.deviceFilter.noiseM: -1 is not 0 or more",
        ),
        (
            defaults("trackers", "deviceFilter", "taps", "1000"),
            "performerDefaults.trackers.deviceFilter.taps: 1000 is not from 2 to 48",
        ),
        (
            r#"{"performers": {"alice": {"mocapIk": {"handWeight": 2}}}}"#.to_owned(),
            "performers.alice.mocapIk.handWeight: 2 is not from 0 to 1",
        ),
        (
            calibration("height", "0"),
            "performers.vr.calibration.height: 0 is not more than 0",
        ),
        (
            calibration("height", "-1"),
            "performers.vr.calibration.height: -1 is not more than 0",
        ),
        (
            calibration("headRotation", "[0, 0, 0, 0]"),
            "performers.vr.calibration.headRotation: [0.0, 0.0, 0.0, 0.0] is not a rotation: \
             a quaternion [x, y, z, w] of non-zero length",
        ),
        (
            r#"{"pipeline": {"maxPerformers": 0}}"#.to_owned(),
            "pipeline.maxPerformers: must be at least 1",
        ),
        (
            r#"{"websocket": {"clientQueue": 0}}"#.to_owned(),
            "websocket.clientQueue: must be at least 1",
        ),
    ] {
        assert_eq!(
            parse(&text).unwrap_err(),
            format!("bridge.json: {expected}"),
            "{text}"
        );
    }
    // The ends of the ranges are settings too.
    parse(&defaults("skeleton", "mocapIk", "handWeight", "0")).unwrap();
    parse(&defaults("trackers", "vrIk", "softness", "0")).unwrap();
    parse(&defaults("trackers", "deviceFilter", "taps", "48")).unwrap();
}
