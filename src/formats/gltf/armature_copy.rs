//! Clips keyed on a copy of the skeleton. Blender writes each armature object of a
//! scene as its own node tree, and an action on an armature that skins nothing (a
//! copy of the character's armature, one per action) is an animation whose channels
//! all target nodes outside the skeleton. When every node such an animation keys
//! carries the name of exactly one skeleton joint, and hangs from a node named as
//! that joint's parent or from one no joint's name carries (the copy's own armature
//! object), the node tree is that skeleton again: the animation drives the skeleton
//! by name. The copy's armature object may be keyed too (Blender keys it with its
//! bones): a keyed node no joint's name carries, with a child copying a joint, drives
//! the joint that joint's original hangs from (the skeleton's own armature object).

use std::collections::HashMap;

/// The node -> joint positions an animation keying `animated` reads through: `None`
/// when it keys a skeleton node (it is the skeleton's own), keys nothing, or keys a
/// node that is no copy of a joint; else `position` with each keyed node put at the
/// joint it copies. `names` and `parent` are per node, `position` maps a node to its
/// joint.
pub(super) fn copy_positions(
    animated: &[usize],
    names: &[Option<&str>],
    parent: &[Option<usize>],
    position: &[Option<usize>],
) -> Option<Vec<Option<usize>>> {
    if animated.is_empty()
        || animated
            .iter()
            .any(|&n| position.get(n).is_some_and(Option::is_some))
    {
        return None;
    }
    // Joint name -> its node, for names only one joint carries.
    let mut by_name: HashMap<&str, Option<usize>> = HashMap::new();
    for (node, joint) in position.iter().enumerate() {
        if let (Some(_), Some(Some(name))) = (joint, names.get(node)) {
            by_name
                .entry(name)
                .and_modify(|seen| *seen = None)
                .or_insert(Some(node));
        }
    }
    let name_of = |node: Option<usize>| node.and_then(|n| names.get(n).copied().flatten());
    let original_of = |node: usize| by_name.get(name_of(Some(node))?).copied().flatten();
    // The skeleton's joint the keyed armature object `node` stands for: the parent of
    // the original of a child of `node` that copies a joint.
    let armature_of = |node: usize| {
        (0..parent.len())
            .filter(|&child| parent[child] == Some(node))
            .find_map(|child| parent[original_of(child)?])
            .filter(|&p| position[p].is_some())
    };
    let mut copied = position.to_vec();
    for &node in animated {
        let name = name_of(Some(node))?;
        if !by_name.contains_key(name) {
            copied[node] = position[armature_of(node)?];
            continue;
        }
        let original = original_of(node)?;
        let hangs_from = name_of(parent[node]);
        if hangs_from.is_some_and(|name| by_name.contains_key(name))
            && hangs_from != name_of(parent[original])
        {
            return None;
        }
        copied[node] = position[original];
    }
    Some(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node names, parents and joint positions.
    type Scene = (
        Vec<Option<&'static str>>,
        Vec<Option<usize>>,
        Vec<Option<usize>>,
    );

    /// Nodes: Armature (0) > Hips (1) > Spine (2), the skeleton (joints 0..3), and
    /// Dance (3) > Hips (4) > Spine (5), a copy outside it.
    fn scene() -> Scene {
        let names = ["Armature", "Hips", "Spine", "Dance", "Hips", "Spine"]
            .map(Some)
            .to_vec();
        let parent = vec![None, Some(0), Some(1), None, Some(3), Some(4)];
        let position = vec![Some(0), Some(1), Some(2), None, None, None];
        (names, parent, position)
    }

    #[test]
    fn a_copy_of_the_armature_reads_onto_the_skeleton_by_name() {
        let (names, parent, position) = scene();
        let copied = copy_positions(&[4, 5], &names, &parent, &position).unwrap();
        assert_eq!(copied[4], Some(1));
        assert_eq!(copied[5], Some(2));
        assert_eq!(copied[..3], position[..3]);
    }

    #[test]
    fn a_copy_keyed_with_its_armature_object_drives_the_skeletons_armature() {
        // Blender keys the copy's armature object `Dance` with its bones.
        let (names, parent, position) = scene();
        let copied = copy_positions(&[3, 4, 5], &names, &parent, &position).unwrap();
        assert_eq!(copied[3], Some(0));
        assert_eq!(copied[4], Some(1));
        assert_eq!(copied[5], Some(2));
    }

    #[test]
    fn no_copy_when_the_skeleton_is_keyed_or_names_or_parents_differ() {
        let (mut names, mut parent, position) = scene();
        // Keys the skeleton itself: its own clip.
        assert_eq!(copy_positions(&[1, 5], &names, &parent, &position), None);
        assert_eq!(copy_positions(&[], &names, &parent, &position), None);
        // Spine hangs from another joint in the copy than in the skeleton.
        names[3] = Some("Armature");
        parent[5] = Some(3);
        assert_eq!(copy_positions(&[5], &names, &parent, &position), None);
        parent[5] = Some(4);
        // A name no joint has, and a name two joints share.
        names[5] = Some("Tail");
        assert_eq!(copy_positions(&[5], &names, &parent, &position), None);
        names[2] = Some("Hips");
        names[5] = Some("Hips");
        assert_eq!(copy_positions(&[5], &names, &parent, &position), None);
    }
}
