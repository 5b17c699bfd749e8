//! The glTF spec's rule for sparse accessor indices: each index lies inside the accessor
//! (`< count`) and the indices strictly increase. The `gltf` crate's reader and our
//! dequantizer both assume it; a file that breaks it is an error naming the first bad index.

/// Checks `indices` (in file order) of a sparse accessor with `count` elements.
pub(super) fn check_indices(
    indices: impl IntoIterator<Item = u64>,
    count: u64,
) -> Result<(), String> {
    let mut previous: Option<u64> = None;
    for (k, i) in indices.into_iter().enumerate() {
        if i >= count {
            return Err(format!(
                "sparse index {k} is {i}, outside the accessor's {count} elements"
            ));
        }
        if let Some(p) = previous
            && i <= p
        {
            return Err(format!(
                "sparse index {k} is {i} after {p}; sparse indices must strictly increase"
            ));
        }
        previous = Some(i);
    }
    Ok(())
}

/// Index `k` of little-endian indices of `size` bytes (1, 2 or 4), if `bytes` holds it.
pub(super) fn index_at(bytes: &[u8], size: usize, k: usize) -> Option<u64> {
    let b = bytes.get(k.checked_mul(size)?..)?.get(..size)?;
    Some(match size {
        1 => b[0] as u64,
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_and_decreasing_indices_are_errors() {
        assert!(check_indices([0, 2, 5], 6).is_ok());
        let e = check_indices([0, 6], 6).unwrap_err();
        assert!(e.contains("sparse index 1 is 6, outside"), "{e}");
        let e = check_indices([3, 1], 6).unwrap_err();
        assert!(e.contains("strictly increase"), "{e}");
        let e = check_indices([2, 2], 6).unwrap_err();
        assert!(e.contains("strictly increase"), "{e}");
        assert_eq!(index_at(&[1, 0, 0, 0, 7, 1, 0, 0], 4, 1), Some(263));
        assert_eq!(index_at(&[1, 2], 2, 1), None);
    }
}
