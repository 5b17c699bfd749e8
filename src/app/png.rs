//! Saves the window screenshot of the `view` command as a compressed PNG (the `png` crate,
//! already in the dependency tree through `image`).

use std::path::Path;

/// Encodes `rgba` (`width * height * 4` bytes) as PNG.
pub fn encode(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut e = png::Encoder::new(&mut out, width, height);
    e.set_color(png::ColorType::Rgba);
    e.set_depth(png::BitDepth::Eight);
    e.set_compression(png::Compression::High);
    let mut w = e.write_header()?;
    w.write_image_data(rgba)?;
    w.finish()?;
    Ok(out)
}

/// Writes an egui screenshot as PNG (atomically).
pub fn save(image: &egui::ColorImage, path: &Path) -> std::io::Result<()> {
    let rgba: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(|p| p.to_srgba_unmultiplied())
        .collect();
    let bytes =
        encode(image.size[0] as u32, image.size[1] as u32, &rgba).map_err(std::io::Error::other)?;
    crate::fsutil::write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips_through_the_decoder() {
        let (w, h) = (7u32, 5u32);
        let rgba: Vec<u8> = (0..w * h * 4).map(|i| (i * 37 % 251) as u8).collect();
        let bytes = super::encode(w, h, &rgba).unwrap();
        let mut r = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (w, h));
        assert_eq!(&buf[..info.buffer_size()], &rgba[..]);
    }
}
