//! Constant-time ancestor tests: each joint's interval in a depth-first numbering of the
//! hierarchy, so "is `a` at or above `j`" is two comparisons instead of a walk to the root
//! (which made the glTF verifier's per-channel, per-joint tests cubic on deep chains).

use super::Skeleton;

/// Depth-first entry and exit numbers of every joint of one skeleton.
#[derive(Clone, Debug)]
pub struct Ancestry {
    enter: Vec<u32>,
    exit: Vec<u32>,
}

impl Ancestry {
    /// Numbers `skeleton`'s joints in O(joints), iteratively (no recursion on deep chains).
    pub fn new(skeleton: &Skeleton) -> Self {
        let n = skeleton.len();
        let children = skeleton.children();
        let mut enter = vec![0u32; n];
        let mut exit = vec![0u32; n];
        let mut clock = 0u32;
        // (joint, next child to visit)
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in (0..n).filter(|&j| skeleton.joints[j].parent.is_none()) {
            enter[root] = clock;
            clock += 1;
            stack.push((root, 0));
            while let Some((j, next)) = stack.last_mut() {
                let j = *j;
                if let Some(&c) = children[j].get(*next) {
                    *next += 1;
                    enter[c] = clock;
                    clock += 1;
                    stack.push((c, 0));
                } else {
                    exit[j] = clock;
                    stack.pop();
                }
            }
        }
        Self { enter, exit }
    }

    /// True when `ancestor` is `joint` or lies on its path to the root
    /// (`Skeleton::is_ancestor_or_self`, in constant time).
    #[inline]
    pub fn contains(&self, ancestor: usize, joint: usize) -> bool {
        self.enter[ancestor] <= self.enter[joint] && self.exit[joint] <= self.exit[ancestor]
    }
}

/// Per joint: whether it is one of `joints` or an ancestor of one, in O(joints of the
/// skeleton) (each joint is marked once; a walk stops at a marked joint).
pub fn at_or_above(skeleton: &Skeleton, joints: &[usize]) -> Vec<bool> {
    let mut marked = vec![false; skeleton.len()];
    for &j in joints {
        let mut a = Some(j);
        while let Some(i) = a.filter(|&i| !marked[i]) {
            marked[i] = true;
            a = skeleton.joints[i].parent;
        }
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Transform};

    #[test]
    fn agrees_with_the_walk_to_the_root() {
        let parents = [
            None,
            Some(0),
            Some(0),
            Some(1),
            Some(2),
            None,
            Some(5),
            Some(3),
        ];
        let joints = parents
            .iter()
            .enumerate()
            .map(|(i, &p)| Joint::new(format!("j{i}"), p, Transform::IDENTITY))
            .collect();
        let s = Skeleton::new(joints).unwrap();
        let a = Ancestry::new(&s);
        for x in 0..s.len() {
            for y in 0..s.len() {
                assert_eq!(a.contains(x, y), s.is_ancestor_or_self(x, y), "{x} {y}");
            }
        }
        let marked = at_or_above(&s, &[4, 7]);
        let walked: Vec<bool> = (0..s.len())
            .map(|x| s.is_ancestor_or_self(x, 4) || s.is_ancestor_or_self(x, 7))
            .collect();
        assert_eq!(marked, walked);
    }
}
