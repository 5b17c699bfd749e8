//! The joint hierarchy, ordered parents-first.

use super::{Socket, Transform};

/// One node of the hierarchy.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    pub name: String,
    /// Index of the parent joint; always smaller than this joint's index.
    pub parent: Option<usize>,
    /// The rest (bind) local transform, used wherever a clip does not animate the joint.
    pub rest: Transform,
    /// Whether the joint deforms something (a skin joint, or an animated node in a file
    /// without skins). Helper ancestors (an armature node) are kept so that object space is
    /// the scene root's, but carry no markers of their own.
    pub deforming: bool,
    /// The glTF node this joint came from, if any (used by the glTF exporter).
    pub source_node: Option<usize>,
    /// A marker offset the source file prescribes (the ACL `vertex_distance`), in scene units.
    pub source_marker_offset: Option<f32>,
}

impl Joint {
    pub fn new(name: impl Into<String>, parent: Option<usize>, rest: Transform) -> Self {
        Self {
            name: name.into(),
            parent,
            rest,
            deforming: true,
            source_node: None,
            source_marker_offset: None,
        }
    }
}

/// A tree (or forest) of joints; `joints[i].parent < i` for every joint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skeleton {
    pub joints: Vec<Joint>,
    /// Non-joint nodes hanging from joints ([`Socket`]), measured with their joint. Not
    /// stored in `.skp` files: a skeleton read from one has none.
    pub sockets: Vec<Socket>,
}

impl Skeleton {
    /// Builds a skeleton, checking that parents come before children.
    pub fn new(joints: Vec<Joint>) -> Result<Self, String> {
        for (i, j) in joints.iter().enumerate() {
            if let Some(p) = j.parent
                && p >= i
            {
                return Err(format!(
                    "joint {i} '{}' has parent {p}, which does not come before it",
                    j.name
                ));
            }
        }
        Ok(Self {
            joints,
            sockets: Vec::new(),
        })
    }

    pub fn len(&self) -> usize {
        self.joints.len()
    }

    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// Finds a joint by exact name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }

    /// Each joint's uniform scale at the rest pose in the space of the scene root: the mean
    /// length of its object-space axes (DESIGN §2). A marker `d` scene units from a joint
    /// sits `d / s_j` along its local axes. Degenerate (zero or non-finite) scales read 1.
    pub fn rest_scales(&self) -> Vec<f32> {
        let mut obj = vec![glam::DAffine3::IDENTITY; self.len()];
        super::local_to_object_f64(self, &self.rest_pose(), &mut obj);
        obj.iter()
            .map(|m| {
                let m = &m.matrix3;
                let s = (m.x_axis.length() + m.y_axis.length() + m.z_axis.length()) / 3.0;
                if s.is_finite() && s > 1e-12 {
                    s as f32
                } else {
                    1.0
                }
            })
            .collect()
    }

    /// Number of joints on the path from a root to `joint`, inclusive.
    pub fn depth_of(&self, joint: usize) -> usize {
        let mut d = 1;
        let mut j = joint;
        while let Some(p) = self.joints[j].parent {
            d += 1;
            j = p;
        }
        d
    }

    /// The deepest chain length in the hierarchy.
    pub fn max_depth(&self) -> usize {
        let mut depth = vec![0usize; self.len()];
        for (i, j) in self.joints.iter().enumerate() {
            depth[i] = j.parent.map_or(1, |p| depth[p] + 1);
        }
        depth.into_iter().max().unwrap_or(0)
    }

    /// Children lists, in joint order.
    pub fn children(&self) -> Vec<Vec<usize>> {
        let mut c = vec![Vec::new(); self.len()];
        for (i, j) in self.joints.iter().enumerate() {
            if let Some(p) = j.parent {
                c[p].push(i);
            }
        }
        c
    }

    /// True when `ancestor` is `joint` or lies on its path to the root.
    pub fn is_ancestor_or_self(&self, ancestor: usize, joint: usize) -> bool {
        let mut j = Some(joint);
        while let Some(i) = j {
            if i == ancestor {
                return true;
            }
            j = self.joints[i].parent;
        }
        false
    }

    /// `joint` and every joint below it, parents first (joints are stored parents-first, so
    /// a subtree is the joints after `joint` that have it as an ancestor).
    pub fn subtree(&self, joint: usize) -> Vec<usize> {
        let mut inside = vec![false; self.len()];
        let mut out = Vec::new();
        for (i, j) in self.joints.iter().enumerate().skip(joint) {
            if i == joint || j.parent.is_some_and(|p| inside[p]) {
                inside[i] = true;
                out.push(i);
            }
        }
        out
    }

    /// Per joint, the number of links down to its deepest descendant (0 for a leaf).
    pub fn heights(&self) -> Vec<usize> {
        let mut h = vec![0usize; self.len()];
        for (i, j) in self.joints.iter().enumerate().rev() {
            if let Some(p) = j.parent {
                h[p] = h[p].max(h[i] + 1);
            }
        }
        h
    }

    /// Rest pose, one local transform per joint.
    pub fn rest_pose(&self) -> Vec<Transform> {
        self.joints.iter().map(|j| j.rest).collect()
    }

    /// Indices of the joints that carry markers.
    pub fn deforming_joints(&self) -> impl Iterator<Item = usize> + '_ {
        self.joints
            .iter()
            .enumerate()
            .filter(|(_, j)| j.deforming)
            .map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize) -> Skeleton {
        Skeleton::new(
            (0..n)
                .map(|i| Joint::new(format!("j{i}"), i.checked_sub(1), Transform::IDENTITY))
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn depth_and_children() {
        let s = chain(4);
        assert_eq!(s.max_depth(), 4);
        assert_eq!(s.depth_of(2), 3);
        assert_eq!(s.children()[1], vec![2]);
        assert!(s.is_ancestor_or_self(0, 3));
        assert!(!s.is_ancestor_or_self(3, 0));
        assert_eq!(s.subtree(1), vec![1, 2, 3]);
        assert_eq!(s.heights(), vec![3, 2, 1, 0]);
    }

    #[test]
    fn subtree_skips_siblings() {
        let s = Skeleton::new(vec![
            Joint::new("root", None, Transform::IDENTITY),
            Joint::new("a", Some(0), Transform::IDENTITY),
            Joint::new("b", Some(0), Transform::IDENTITY),
            Joint::new("a1", Some(1), Transform::IDENTITY),
            Joint::new("b1", Some(2), Transform::IDENTITY),
        ])
        .unwrap();
        assert_eq!(s.subtree(1), vec![1, 3]);
        assert_eq!(s.subtree(2), vec![2, 4]);
        assert_eq!(s.subtree(0), vec![0, 1, 2, 3, 4]);
        assert_eq!(s.heights(), vec![2, 1, 1, 0, 0]);
    }

    #[test]
    fn rejects_child_before_parent() {
        let j = vec![
            Joint::new("a", Some(1), Transform::IDENTITY),
            Joint::new("b", None, Transform::IDENTITY),
        ];
        assert!(Skeleton::new(j).is_err());
    }
}
