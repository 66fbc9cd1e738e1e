//! The solver's settings per performer: built-in defaults per kind of source,
//! what the file changes of them per kind and per named performer, merged key by
//! key.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use crate::filter::{DeviceFilterConfig, OneEuroConfig};
use crate::ik::calibration::Calibration;
use crate::ik::mocap::MocapIkConfig;
use crate::ik::vr::VrIkConfig;
use crate::pipeline::performer::PerformerSettings;

/// Solver settings of one performer (or of a kind of source).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct PerformerConfig {
    /// One Euro smoothing of the solved pose; `null`: none.
    pub filter: Option<OneEuroConfig>,
    /// Smoothing of tracked device positions and rotations before VR-mode IK
    /// (tracker sources); `null`: none.
    pub device_filter: Option<DeviceFilterConfig>,
    /// Mocap-mode IK (skeleton sources).
    pub mocap_ik: MocapIkSetting,
    /// VR-mode IK (tracker sources).
    pub vr_ik: VrIkConfig,
    /// A stored T-pose calibration (tracker sources); `null`: the avatar's body
    /// until the performer calibrates.
    pub calibration: Option<Calibration>,
}

impl PerformerConfig {
    /// The solver's settings for a performer with an avatar of its own choosing
    /// (`has_avatar`) or on the built-in humanoid (see `MocapIkSetting`).
    #[must_use]
    pub fn settings(&self, has_avatar: bool) -> PerformerSettings {
        PerformerSettings {
            filter: self.filter,
            device_filter: self.device_filter,
            mocap_ik: self.mocap_ik.resolve(has_avatar),
            vr_ik: self.vr_ik,
            calibration: self.calibration,
        }
    }
}

/// Defaults per kind of source. In the file each kind's entry says only what it
/// changes from the built-in defaults of that kind (see `PerformerOverrides`).
#[derive(Debug, Clone, PartialEq)]
pub struct PerformerDefaults {
    pub humanoid: PerformerConfig,
    pub skeleton: PerformerConfig,
    pub trackers: PerformerConfig,
}

impl<'de> Deserialize<'de> for PerformerDefaults {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
        #[derive(Default)]
        struct Entries {
            #[serde(deserialize_with = "kind_entry")]
            humanoid: PerformerOverrides,
            #[serde(deserialize_with = "kind_entry")]
            skeleton: PerformerOverrides,
            #[serde(deserialize_with = "kind_entry")]
            trackers: PerformerOverrides,
        }
        /// A kind's entry: a performer's fields but the avatar (avatars belong to
        /// performers, not to kinds of source).
        fn kind_entry<'de, D: serde::Deserializer<'de>>(
            deserializer: D,
        ) -> Result<PerformerOverrides, D::Error> {
            let entry = PerformerOverrides::deserialize(deserializer)?;
            match entry.avatar {
                Some(_) => Err(serde::de::Error::custom(
                    "avatar: set the avatar at the top level or in a performer's entry",
                )),
                None => Ok(entry),
            }
        }
        let entries = Entries::deserialize(deserializer)?;
        let built_in = Self::default();
        Ok(Self {
            humanoid: entries.humanoid.apply(&built_in.humanoid),
            skeleton: entries.skeleton.apply(&built_in.skeleton),
            trackers: entries.trackers.apply(&built_in.trackers),
        })
    }
}

/// What one performer's entry (or a kind's defaults) changes, field by field: a
/// field it leaves out keeps the value it overrides, and `mocapIk`, `vrIk`,
/// `filter`, `deviceFilter` and `calibration` merge key by key, so a saved
/// calibration leaves the device filter on and one `mocapIk` key changes only
/// that key. `null` turns a filter off. A performer's entry may also name its
/// avatar.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PerformerOverrides {
    fields: serde_json::Map<String, Value>,
    /// This performer's avatar (see `BridgeConfig::avatar`); `None`: the default.
    pub avatar: Option<PathBuf>,
}

impl<'de> Deserialize<'de> for PerformerOverrides {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut fields = serde_json::Map::deserialize(deserializer)?;
        let avatar = match fields.remove("avatar") {
            None => None,
            Some(value) => Option::<PathBuf>::deserialize(value)
                .map_err(|e| serde::de::Error::custom(format!("avatar: {e}")))?,
        };
        // Checked now against the built-in defaults, so `apply` cannot fail later:
        // every field's type is the same whatever it overrides.
        merged(&PerformerConfig::default(), &fields).map_err(serde::de::Error::custom)?;
        Ok(Self { fields, avatar })
    }
}

impl PerformerOverrides {
    /// `defaults` with these fields changed.
    #[must_use]
    pub fn apply(&self, defaults: &PerformerConfig) -> PerformerConfig {
        merged(defaults, &self.fields).unwrap_or_else(|e| {
            tracing::error!("performer settings not applied: {e}");
            defaults.clone()
        })
    }
}

/// `base` with `fields` merged in key by key (objects into objects, anything else
/// replaced), read back as settings; the error names the field.
fn merged(
    base: &PerformerConfig,
    fields: &serde_json::Map<String, Value>,
) -> Result<PerformerConfig, String> {
    fn merge(base: &mut Value, patch: &Value) {
        match (base, patch) {
            (Value::Object(base), Value::Object(patch)) => {
                for (key, value) in patch {
                    merge(base.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
            (base, patch) => *base = patch.clone(),
        }
    }
    let mut value = serde_json::to_value(base).map_err(|e| e.to_string())?;
    merge(&mut value, &Value::Object(fields.clone()));
    serde_path_to_error::deserialize(value).map_err(|e| format!("{}: {}", e.path(), e.inner()))
}

impl Default for PerformerDefaults {
    fn default() -> Self {
        Self {
            humanoid: PerformerConfig::default(),
            skeleton: PerformerConfig::default(),
            // Consumer trackers jitter by millimetres: smooth their poses by
            // default, before the IK (no lag on steady motion, unlike a low-pass
            // on the pose).
            trackers: PerformerConfig {
                device_filter: Some(DeviceFilterConfig::default()),
                ..PerformerConfig::default()
            },
        }
    }
}

/// Mocap-mode IK settings as the file spells them. `enabled` may be `null` (the
/// default): the IK is then on for a performer with an avatar (`avatar`, a
/// performer's own, `run --avatar`) and off on the built-in humanoid; `true` or
/// `false` says so for every performer.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MocapIkSetting {
    /// `Some(on)`: as said; `None`: on exactly when the performer has an avatar.
    pub enabled: Option<bool>,
    /// The solver's other settings (its own `enabled` is what `resolve` gives).
    pub ik: MocapIkConfig,
}

impl MocapIkSetting {
    /// The solver's settings for a performer with (`has_avatar`) or without an
    /// avatar.
    #[must_use]
    pub fn resolve(&self, has_avatar: bool) -> MocapIkConfig {
        MocapIkConfig {
            enabled: self.enabled.unwrap_or(has_avatar),
            ..self.ik
        }
    }
}

impl serde::Serialize for MocapIkSetting {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut value = serde_json::to_value(self.ik).map_err(serde::ser::Error::custom)?;
        if let Value::Object(fields) = &mut value {
            fields.insert("enabled".into(), self.enabled.into());
        }
        value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for MocapIkSetting {
    /// Key by key, so an error names its key (`mocapIk.hands`): `enabled` as
    /// `null` or a boolean, every other key as `MocapIkConfig` reads it.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Key(String);
        impl<'de> serde::de::DeserializeSeed<'de> for Key {
            type Value = Value;
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
                let value = Value::deserialize(d)?;
                let alone = Value::Object([(self.0, value.clone())].into_iter().collect());
                MocapIkConfig::deserialize(alone).map_err(serde::de::Error::custom)?;
                Ok(value)
            }
        }
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = MocapIkSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("mocap IK settings")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<MocapIkSetting, A::Error> {
                let mut enabled = None;
                let mut fields = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "enabled" {
                        enabled = map.next_value::<Option<bool>>()?;
                    } else {
                        let value = map.next_value_seed(Key(key.clone()))?;
                        fields.insert(key, value);
                    }
                }
                let ik = MocapIkConfig::deserialize(Value::Object(fields))
                    .map_err(serde::de::Error::custom)?;
                Ok(MocapIkSetting { enabled, ik })
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}
