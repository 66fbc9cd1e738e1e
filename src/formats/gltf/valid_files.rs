//! What the loader tolerates: one small, valid glTF per thing the Khronos validator
//! accepts and a careless loader refuses (scenes without nodes, several scenes and
//! no default, several skins over one armature, plain nodes without a skin, matrix
//! nodes, children listed before their parents, compressed meshes the skeleton does
//! not need, sparse accessors, cameras and lights), and the real files that have
//! them.

use std::f32::consts::FRAC_1_SQRT_2;

use glam::{Mat4, Quat, Vec3};
use serde_json::{Value, json};

use super::test_support::*;

/// Key times and rotations of a two-key clip turning one node 90° about +Y.
const TURN: [f32; 8] = [0.0, 0.0, 0.0, 1.0, 0.0, FRAC_1_SQRT_2, 0.0, FRAC_1_SQRT_2];

/// `arm_posed_down` with a T-pose skin, in scenes 1 and 2 (scene 0 has no nodes)
/// and no default scene.
pub(super) fn scenes_without_nodes_and_no_default() -> Value {
    let bind = t_pose_bind_worlds().map(|m| m.inverse());
    let mut doc = skinned(arm_posed_down(), &[0, 1, 2], &bind);
    if let Some(object) = doc.as_object_mut() {
        object.remove("scene");
    }
    doc["scenes"] = json!([{"name": "empty"}, {"nodes": [0]}, {"name": "again", "nodes": [0]}]);
    doc
}

/// Hips, Arm (posed down in the nodes), Forearm, Hand; skin 0 binds the first
/// three in the T-pose in scene space, skin 1 binds Forearm and Hand in a mesh
/// frame that is Z-up and 100 times smaller (as an exporter writes a second mesh).
pub(super) fn two_skins_in_two_frames() -> Value {
    let mut nodes = arm_posed_down();
    nodes[2]["children"] = json!([3]);
    if let Some(list) = nodes.as_array_mut() {
        list.push(json!({"name": "Hand", "translation": [0.25, 0.0, 0.0]}));
        list.push(json!({"name": "Body", "mesh": 0, "skin": 0}));
        list.push(json!({"name": "Glove", "mesh": 0, "skin": 1}));
    }
    let bind = t_pose_bind_worlds();
    let hand = Mat4::from_translation(Vec3::new(0.75, 1.5, 0.0));
    let mesh_frame = Mat4::from_scale_rotation_translation(
        Vec3::splat(100.0),
        Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2),
        Vec3::new(0.0, 0.3, 0.0),
    );
    let skin0: Vec<f32> = bind
        .iter()
        .flat_map(|w| w.inverse().to_cols_array())
        .collect();
    let skin1: Vec<f32> = [bind[2], hand]
        .iter()
        .flat_map(|w| (mesh_frame.inverse() * *w).inverse().to_cols_array())
        .collect();
    let mut fixture = Fixture::new(json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 4, 5]}],
        "nodes": nodes,
    }));
    let ibm0 = fixture.floats("MAT4", &skin0);
    let ibm1 = fixture.floats("MAT4", &skin1);
    let mesh = triangle(&mut fixture, true);
    fixture.doc["skins"] = json!([
        {"joints": [0, 1, 2], "inverseBindMatrices": ibm0},
        {"joints": [2, 3], "inverseBindMatrices": ibm1}
    ]);
    fixture.doc["meshes"] = json!([mesh]);
    fixture.finish()
}

/// A skinnable triangle: POSITION (with its bounds), and JOINTS_0 / WEIGHTS_0 when
/// `skinned`, all on joint 0.
fn triangle(fixture: &mut Fixture, skinned: bool) -> Value {
    let position = fixture.floats("VEC3", &[0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1, 0.0]);
    fixture.doc["accessors"][position]["min"] = json!([0.0, 0.0, 0.0]);
    fixture.doc["accessors"][position]["max"] = json!([0.1, 0.1, 0.0]);
    let mut attributes = json!({"POSITION": position});
    if skinned {
        let joints = fixture.view(&[0u8; 12]);
        let joints = fixture.accessor(json!({
            "bufferView": joints, "componentType": 5121, "count": 3, "type": "VEC4"
        }));
        let weights = fixture.floats("VEC4", &[1.0, 0.0, 0.0, 0.0].repeat(3));
        attributes["JOINTS_0"] = json!(joints);
        attributes["WEIGHTS_0"] = json!(weights);
    }
    json!({"primitives": [{"attributes": attributes}]})
}

/// A figure on plain nodes, no skin, its spine animated; beside it a camera, a
/// light and a static badge mesh. Root → Hips → (Spine → Head, LeftLeg (a matrix
/// node) → LeftFoot, Badge).
pub(super) fn plain_nodes_with_camera_and_light() -> Value {
    let leg =
        Mat4::from_rotation_translation(Quat::from_rotation_x(0.2), Vec3::new(0.1, -0.05, 0.0));
    let mut fixture = Fixture::new(json!({
        "asset": {"version": "2.0"},
        "extensionsUsed": ["KHR_lights_punctual"],
        "extensions": {"KHR_lights_punctual": {"lights": [{"type": "point"}]}},
        "scene": 0,
        "scenes": [{"nodes": [0, 7, 8]}],
        "nodes": [
            {"name": "Root", "children": [1]},
            {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [2, 4, 6]},
            {"name": "Spine", "translation": [0.0, 0.3, 0.0], "children": [3]},
            {"name": "Head", "translation": [0.0, 0.4, 0.0]},
            {"name": "LeftLeg", "matrix": leg.to_cols_array(), "children": [5]},
            {"name": "LeftFoot", "translation": [0.0, -0.9, 0.0]},
            {"name": "Badge", "mesh": 0, "translation": [0.0, 0.2, 0.1]},
            {"name": "Camera", "camera": 0, "translation": [0.0, 1.5, 3.0]},
            {"name": "Lamp", "extensions": {"KHR_lights_punctual": {"light": 0}}}
        ],
        "cameras": [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}]
    }));
    let times = fixture.floats("SCALAR", &[0.0, 1.0]);
    let turn = fixture.floats("VEC4", &TURN);
    let mesh = triangle(&mut fixture, false);
    fixture.doc["meshes"] = json!([mesh]);
    fixture.doc["animations"] = json!([{
        "name": "Twist",
        "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}],
        "samplers": [{"input": times, "output": turn}]
    }]);
    fixture.finish()
}

/// Hips → Arm (a matrix node) → Forearm, listed child first (Forearm, Arm, Hips),
/// skinned with the nodes' own pose.
pub(super) fn children_before_parents_with_a_matrix_node() -> Value {
    let arm = Mat4::from_rotation_translation(
        Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2),
        Vec3::new(0.2, 0.5, 0.0),
    );
    let hips = Mat4::from_translation(Vec3::Y);
    let forearm = Mat4::from_translation(Vec3::new(0.3, 0.0, 0.0));
    let worlds = [hips * arm * forearm, hips * arm, hips];
    let nodes = json!([
        {"name": "Forearm", "translation": [0.3, 0.0, 0.0]},
        {"name": "Arm", "matrix": arm.to_cols_array(), "children": [0]},
        {"name": "Hips", "translation": [0.0, 1.0, 0.0], "children": [1]}
    ]);
    let mut doc = skinned(nodes, &[0, 1, 2], &worlds.map(|w| w.inverse()));
    doc["scenes"] = json!([{"nodes": [2]}]);
    doc
}

/// `arm_posed_down` skinned, and a mesh compressed with Draco (its data not even
/// there) and a meshopt-compressed buffer view whose fallback buffer has no data,
/// both extensions required.
pub(super) fn compressed_meshes() -> Value {
    let bind = t_pose_bind_worlds().map(|m| m.inverse());
    let mut doc = skinned(arm_posed_down(), &[0, 1, 2], &bind);
    let required = json!(["KHR_draco_mesh_compression", "EXT_meshopt_compression"]);
    doc["extensionsUsed"] = required.clone();
    doc["extensionsRequired"] = required;
    doc["scenes"] = json!([{"nodes": [0, 3]}]);
    if let Some(nodes) = doc["nodes"].as_array_mut() {
        nodes.push(json!({"name": "Body", "mesh": 0}));
    }
    let ibm = doc["bufferViews"][0]["byteLength"].clone();
    if let Some(buffers) = doc["buffers"].as_array_mut() {
        buffers.push(json!({
            "byteLength": 36,
            "extensions": {"EXT_meshopt_compression": {"fallback": true}}
        }));
    }
    doc["bufferViews"] = json!([
        {"buffer": 0, "byteLength": ibm},
        {"buffer": 0, "byteLength": 4},
        {"buffer": 1, "byteLength": 36, "byteStride": 12, "target": 34962, "extensions": {
            "EXT_meshopt_compression": {
                "buffer": 0, "byteOffset": 0, "byteLength": 4, "byteStride": 12,
                "count": 3, "mode": "ATTRIBUTES"
            }
        }}
    ]);
    if let Some(accessors) = doc["accessors"].as_array_mut() {
        accessors.push(json!({
            "componentType": 5126, "count": 3, "type": "VEC3",
            "min": [0.0, 0.0, 0.0], "max": [0.1, 0.1, 0.0]
        }));
        accessors.push(json!({
            "bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC3",
            "min": [0.0, 0.0, 0.0], "max": [0.1, 0.1, 0.0]
        }));
    }
    doc["meshes"] = json!([{"primitives": [
        {"attributes": {"POSITION": 1}, "extensions": {
            "KHR_draco_mesh_compression": {"bufferView": 1, "attributes": {"POSITION": 0}}
        }},
        {"attributes": {"POSITION": 2}}
    ]}]);
    doc
}

/// `arm_posed_down` skinned through a sparse accessor (the arm's matrix put in
/// over an identity), animated through one (the second key put in over the first).
pub(super) fn sparse_accessors() -> Value {
    let bind = t_pose_bind_worlds().map(|m| m.inverse());
    let mut dense: Vec<f32> = bind.iter().flat_map(|m| m.to_cols_array()).collect();
    dense[16..32].copy_from_slice(&Mat4::IDENTITY.to_cols_array());
    let mut fixture = Fixture::new(json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": arm_posed_down(),
    }));
    let ibm = fixture.floats("MAT4", &dense);
    let indices = fixture.view(&[1u8]);
    let arm: Vec<u8> = bind[1]
        .to_cols_array()
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let arm = fixture.view(&arm);
    fixture.doc["accessors"][ibm]["sparse"] = json!({
        "count": 1,
        "indices": {"bufferView": indices, "componentType": 5121},
        "values": {"bufferView": arm}
    });
    let times = fixture.floats("SCALAR", &[0.0, 1.0]);
    let first_key: Vec<f32> = TURN[..4].repeat(2);
    let keys = fixture.floats("VEC4", &first_key);
    let second: Vec<u8> = TURN[4..].iter().flat_map(|v| v.to_le_bytes()).collect();
    let second = fixture.view(&second);
    let at_one = fixture.view(&1u16.to_le_bytes());
    fixture.doc["accessors"][keys]["sparse"] = json!({
        "count": 1,
        "indices": {"bufferView": at_one, "componentType": 5123},
        "values": {"bufferView": second}
    });
    fixture.doc["skins"] = json!([{"joints": [0, 1, 2], "inverseBindMatrices": ibm}]);
    fixture.doc["animations"] = json!([{
        "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}],
        "samplers": [{"input": times, "output": keys}]
    }]);
    fixture.finish()
}

/// `arm_posed_down` with a T-pose skin and two animations, as gltfpack writes
/// them: `Wave`'s key times (plain floats), its rotations (16-bit, QUATERNION
/// filter) and the inverse bind matrices (EXPONENTIAL filter) in meshopt-compressed
/// buffer views over a fallback buffer that holds no data; `Still` plain.
pub(super) fn meshopt_compressed_keys() -> Value {
    let bind = t_pose_bind_worlds().map(|m| m.inverse());
    let required = json!(["EXT_meshopt_compression"]);
    let mut fixture = Fixture::new(json!({
        "asset": {"version": "2.0"},
        "extensionsUsed": required,
        "extensionsRequired": required,
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": arm_posed_down(),
    }));
    let times = fixture.floats("SCALAR", &[0.0, 1.0]);
    let keys = fixture.floats("VEC4", &TURN);
    let turn: Vec<[f32; 4]> = TURN
        .chunks_exact(4)
        .map(|q| [q[0], q[1], q[2], q[3]])
        .collect();
    let binds: Vec<[f32; 16]> = bind.iter().map(Mat4::to_cols_array).collect();
    let encoded = |stream: Result<Vec<u8>, ::meshopt::Error>| stream.expect("encodes");
    // (stream, stride, count, filter) of each compressed view.
    let streams = [
        (
            encoded(::meshopt::encode_vertex_buffer(&[0.0f32, 1.0])),
            4,
            2,
            "NONE",
        ),
        (
            encoded(::meshopt::encode_vertex_buffer(
                &::meshopt::encode_filter_quat(&turn, 16),
            )),
            8,
            2,
            "QUATERNION",
        ),
        (
            encoded(::meshopt::encode_vertex_buffer(
                &::meshopt::encode_filter_exp(&binds, 24, ::meshopt::EncodeExpMode::Separate),
            )),
            64,
            3,
            "EXPONENTIAL",
        ),
    ];
    let placed: Vec<usize> = streams.iter().map(|(s, ..)| fixture.view(s)).collect();
    let mut doc = fixture.finish();
    let mut fallback_length = 0;
    let views = doc["bufferViews"].as_array_mut().unwrap();
    let first_compressed = views.len();
    for ((stream, stride, count, filter), at) in streams.iter().zip(placed) {
        let offset = views[at]["byteOffset"].clone();
        views.push(json!({
            "buffer": 1, "byteOffset": fallback_length, "byteLength": stride * count,
            "extensions": {"EXT_meshopt_compression": {
                "buffer": 0, "byteOffset": offset, "byteLength": stream.len(),
                "byteStride": stride, "count": count, "mode": "ATTRIBUTES", "filter": filter
            }}
        }));
        fallback_length += stride * count;
    }
    doc["buffers"].as_array_mut().unwrap().push(json!({
        "byteLength": fallback_length,
        "extensions": {"EXT_meshopt_compression": {"fallback": true}}
    }));
    let accessors = doc["accessors"].as_array_mut().unwrap();
    let first_accessor = accessors.len();
    accessors.push(json!({
        "bufferView": first_compressed, "componentType": 5126, "count": 2, "type": "SCALAR",
        "min": [0.0], "max": [1.0]
    }));
    accessors.push(json!({
        "bufferView": first_compressed + 1, "componentType": 5122, "normalized": true,
        "count": 2, "type": "VEC4"
    }));
    accessors.push(json!({
        "bufferView": first_compressed + 2, "componentType": 5126, "count": 3, "type": "MAT4"
    }));
    doc["skins"] = json!([{"joints": [0, 1, 2], "inverseBindMatrices": first_accessor + 2}]);
    doc["animations"] = json!([
        {
            "name": "Wave",
            "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}],
            "samplers": [{"input": first_accessor, "output": first_accessor + 1}]
        },
        {
            "name": "Still",
            "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}],
            "samplers": [{"input": times, "output": keys}]
        }
    ]);
    doc
}

#[test]
fn scenes_without_nodes_several_scenes_and_no_default_scene_load() {
    let rig = parse_doc(&scenes_without_nodes_and_no_default()).unwrap();
    assert_eq!(names(&rig), ["Hips", "Arm", "Forearm"]);
    assert!(position(&rig, "Forearm").abs_diff_eq(Vec3::new(0.5, 1.5, 0.0), 1e-5));
}

#[test]
fn two_skins_bound_in_two_frames_give_one_armature_in_its_bind_pose() {
    let rig = parse_doc(&two_skins_in_two_frames()).unwrap();
    assert_eq!(names(&rig), ["Hips", "Arm", "Forearm", "Hand"]);
    assert_eq!(
        rig.notes,
        [
            "rest pose taken from the inverse bind matrices of skins 0 and 1, in one frame (the nodes are posed differently)"
        ]
    );
    let expected = [
        ("Hips", Vec3::new(0.0, 1.0, 0.0)),
        ("Arm", Vec3::new(0.2, 1.5, 0.0)),
        ("Forearm", Vec3::new(0.5, 1.5, 0.0)),
        ("Hand", Vec3::new(0.75, 1.5, 0.0)),
    ];
    for (joint, at) in expected {
        let w = world(&rig, joint);
        assert!(
            Vec3::from(w.translation).abs_diff_eq(at, 1e-4),
            "{joint}: {w:?}"
        );
        let (_, rotation, _) = w.to_scale_rotation_translation();
        assert!(rotation.angle_between(Quat::IDENTITY) < 1e-4, "{joint}");
    }
}

#[test]
fn plain_nodes_without_a_skin_are_the_skeleton_and_animate() {
    let rig = parse_doc(&plain_nodes_with_camera_and_light()).unwrap();
    // The camera, the light and the static badge are not joints.
    assert_eq!(
        names(&rig),
        ["Root", "Hips", "Spine", "Head", "LeftLeg", "LeftFoot"]
    );
    assert_eq!(
        rig.notes,
        ["no skin and no humanoid map: the skeleton is the node hierarchy (6 nodes)"]
    );
    let foot = Mat4::from_translation(Vec3::Y)
        * Mat4::from_rotation_translation(Quat::from_rotation_x(0.2), Vec3::new(0.1, -0.05, 0.0))
        * Mat4::from_translation(Vec3::new(0.0, -0.9, 0.0));
    assert!(position(&rig, "LeftFoot").abs_diff_eq(foot.w_axis.truncate(), 1e-5));
    let clip = rig.clip(Some("Twist")).unwrap();
    let spine = rig.skeleton.find("Spine").unwrap();
    let last = clip.motion.frame_count() - 1;
    let turned = clip.motion.frame(last).rotations[spine];
    assert!(turned.abs_diff_eq(Quat::from_rotation_y(std::f32::consts::FRAC_PI_2), 1e-6));
}

#[test]
fn children_listed_before_parents_and_matrix_nodes_load_parents_first() {
    let rig = parse_doc(&children_before_parents_with_a_matrix_node()).unwrap();
    assert_eq!(names(&rig), ["Hips", "Arm", "Forearm"]);
    assert!(rig.notes.is_empty(), "{:?}", rig.notes);
    assert!(position(&rig, "Forearm").abs_diff_eq(Vec3::new(0.2, 1.2, 0.0), 1e-5));
}

#[test]
fn compressed_meshes_do_not_stop_the_skeleton() {
    let rig = parse_doc(&compressed_meshes()).unwrap();
    assert_eq!(names(&rig), ["Hips", "Arm", "Forearm"]);
    assert!(position(&rig, "Forearm").abs_diff_eq(Vec3::new(0.5, 1.5, 0.0), 1e-5));
}

#[test]
fn sparse_accessors_read_as_their_dense_equivalent() {
    let rig = parse_doc(&sparse_accessors()).unwrap();
    let dense = parse_doc(&skinned(
        arm_posed_down(),
        &[0, 1, 2],
        &t_pose_bind_worlds().map(|m| m.inverse()),
    ))
    .unwrap();
    for joint in ["Hips", "Arm", "Forearm"] {
        let (a, b) = (world(&rig, joint), world(&dense, joint));
        assert!(a.abs_diff_eq(b, 1e-6), "{joint}");
    }
    let motion = &rig.clips[0].motion;
    let forearm = rig.skeleton.find("Forearm").unwrap();
    let first = motion.frame(0).rotations[forearm];
    let last = motion.frame(motion.frame_count() - 1).rotations[forearm];
    assert!(first.abs_diff_eq(Quat::IDENTITY, 1e-6));
    assert!(last.abs_diff_eq(Quat::from_rotation_y(std::f32::consts::FRAC_PI_2), 1e-6));
}

#[test]
fn a_sparse_index_past_the_end_is_named() {
    let mut doc = sparse_accessors();
    // The IBM's sparse index read from the key times' bytes instead: byte 7 of
    // (0.0, 1.0) is 0x3F, 63.
    doc["accessors"][0]["sparse"]["indices"] = json!({
        "bufferView": 3, "byteOffset": 7, "componentType": 5121
    });
    assert_eq!(
        error_of(&doc),
        format!(
            "{PATH}: skin 0: inverseBindMatrices accessor 0: sparse index 63 is past its 3 elements"
        )
    );
}

// --- real files -------------------------------------------------------------------

#[test]
fn real_files_with_these_traits_load_whole() {
    // (file, the trait, joints at least: every skin joint of every skin).
    let cases = [
        (
            "gltf/quaternius_Adventurer_6scenes.gltf",
            "6 scenes, data URI",
            62,
        ),
        ("gltf/quaternius_modular_men_Casual.glb", "4 skins", 49),
        ("gltf/quaternius_Astronaut_draco.glb", "Draco required", 43),
        (
            "gltf/rigify_metarig_male_base_mesh.glb",
            "children first",
            56,
        ),
        ("gltf/LeftHandHumanoid.gltf", "external .bin", 25),
        ("gltf/RobotExpressive.glb", "4 skins, posed nodes", 43),
        ("vrm/vab_armature_transform.vrm", "6 skins", 17),
        ("vrm/basic_armature_vrm0.vrm", "no skin, VRM map", 54),
    ];
    for (file, what, joints) in cases {
        let Some(rig) = load_asset(file) else { return };
        println!(
            "{file} ({what}): {} joints, notes {:?}",
            rig.skeleton.len(),
            rig.notes
        );
        assert!(
            rig.skeleton.len() >= joints,
            "{file}: {}",
            rig.skeleton.len()
        );
    }
}

#[test]
fn meshopt_compressed_keys_and_bind_matrices_are_decoded() {
    let rig = parse_doc(&meshopt_compressed_keys()).unwrap();
    assert_eq!(names(&rig), ["Hips", "Arm", "Forearm"]);
    // The rest from the decoded bind matrices: the T-pose, not the node pose.
    assert_eq!(
        rig.notes,
        ["rest pose taken from skin 0's inverse bind matrices (the nodes are posed differently)"]
    );
    for (joint, at) in [
        ("Arm", Vec3::new(0.2, 1.5, 0.0)),
        ("Forearm", Vec3::new(0.5, 1.5, 0.0)),
    ] {
        assert!(position(&rig, joint).abs_diff_eq(at, 1e-5), "{joint}");
    }
    let clips: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(clips, ["Wave", "Still"]);
    // Both clips turn the forearm alike: the compressed one within its 16 bits.
    let forearm = rig.skeleton.find("Forearm").unwrap();
    let (wave, still) = (&rig.clips[0].motion, &rig.clips[1].motion);
    assert_eq!(wave.times(), still.times());
    for f in 0..wave.frame_count() {
        let (a, b) = (
            wave.frame(f).rotations[forearm],
            still.frame(f).rotations[forearm],
        );
        assert!(a.angle_between(b) < 1e-3, "frame {f}: {a} against {b}");
    }
}

#[test]
fn a_meshopt_stream_that_does_not_decode_is_named() {
    let mut doc = meshopt_compressed_keys();
    // The rotations' stream read as if it were three times longer.
    let view = &mut doc["bufferViews"][6]["extensions"]["EXT_meshopt_compression"];
    view["count"] = json!(6);
    doc["bufferViews"][6]["byteLength"] = json!(48);
    let message = parse_doc(&doc).unwrap_err().to_string();
    assert!(
        message.contains("buffer view 6: the ATTRIBUTES stream of"),
        "{message}"
    );
    // A filter the stride cannot hold.
    let mut doc = meshopt_compressed_keys();
    doc["bufferViews"][7]["extensions"]["EXT_meshopt_compression"]["filter"] = json!("QUATERNION");
    let message = parse_doc(&doc).unwrap_err().to_string();
    assert!(
        message.contains("buffer view 7: EXT_meshopt_compression: byteStride 64 does not suit"),
        "{message}"
    );
}
