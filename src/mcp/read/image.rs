//! The image `mcp_read item` sends to the model beside its text: as CopyQ holds it when a model
//! accepts it as it is, else decoded and scaled down (the `image` crate) to `[images]` limits.
//! Claude takes PNG, JPEG, GIF and WebP up to 8000 px a side and 5 MB, and reads best at a long
//! edge of at most 1568 px (larger ones it scales down itself, after paying for the bytes); ChatGPT
//! takes the same formats up to 20 MB. Hence the defaults: 1568 px, 3.75 MiB (5 MB in base64).

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader, imageops::FilterType};

/// `[images]` in the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    /// Longest edge sent, in pixels: a larger image is scaled down to it.
    pub max_edge: u32,
    /// Most bytes sent (before base64): an image larger than this even after scaling is not sent.
    pub max_bytes: u64,
}

impl Default for ImageLimits {
    fn default() -> Self {
        Self {
            max_edge: 1568,
            max_bytes: 3_932_160,
        }
    }
}

/// Which images `item` sends, and how large: `[images]`, and `[privacy] external_images`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImagePolicy {
    pub limits: ImageLimits,
    /// Whether images of external tabs (the owner's own copies) may leave the machine.
    pub external: bool,
}

impl Default for ImagePolicy {
    fn default() -> Self {
        Self {
            limits: ImageLimits::default(),
            external: true,
        }
    }
}

/// What `item` does with an item's image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Sent(Sent),
    /// Why it was not sent, in words for the reply's `image:` line.
    NotSent(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub mime: &'static str,
    pub data: Vec<u8>,
    pub pixels: (u32, u32),
    /// The pixel size CopyQ holds, when the image was scaled down from it.
    pub scaled_from: Option<(u32, u32)>,
}

impl Outcome {
    /// The reply's `image:` line (without the key).
    pub fn line(&self) -> String {
        match self {
            Self::Sent(s) => {
                let (w, h) = s.pixels;
                let mut line = format!("sent {} {w}x{h} {}B", s.mime, s.data.len());
                if let Some((fw, fh)) = s.scaled_from {
                    line.push_str(&format!(" scaled from {fw}x{fh}"));
                }
                line
            }
            Self::NotSent(why) => format!("not sent: {why}"),
        }
    }
}

/// The formats a model takes as they are.
fn accepted(mime: &str) -> Option<(&'static str, ImageFormat)> {
    match mime {
        "image/png" => Some(("image/png", ImageFormat::Png)),
        "image/jpeg" => Some(("image/jpeg", ImageFormat::Jpeg)),
        "image/gif" => Some(("image/gif", ImageFormat::Gif)),
        "image/webp" => Some(("image/webp", ImageFormat::WebP)),
        _ => None,
    }
}

/// `bytes` of format `mime` as the model gets it, within `limits`.
pub fn prepare(mime: &str, bytes: Vec<u8>, limits: ImageLimits) -> Outcome {
    let format = match (accepted(mime), mime) {
        (Some((_, f)), _) => f,
        (None, "image/bmp") => ImageFormat::Bmp,
        (None, other) => {
            return Outcome::NotSent(format!("{other} is not an image format models take"));
        }
    };
    let pixels = imagesize::blob_size(&bytes)
        .ok()
        .and_then(|s| Some((u32::try_from(s.width).ok()?, u32::try_from(s.height).ok()?)));
    // As it is, when a model takes it and it is within the limits (a GIF keeps its frames).
    if let (Some((mime, _)), Some(px)) = (accepted(mime), pixels)
        && px.0.max(px.1) <= limits.max_edge
        && bytes.len() as u64 <= limits.max_bytes
    {
        return Outcome::Sent(Sent {
            mime,
            data: bytes,
            pixels: px,
            scaled_from: None,
        });
    }
    let decoded = ImageReader::with_format(Cursor::new(&bytes), format).decode();
    let Ok(img) = decoded else {
        return Outcome::NotSent(format!("{mime} could not be decoded"));
    };
    let from = (img.width(), img.height());
    let img = if from.0.max(from.1) > limits.max_edge {
        img.resize(limits.max_edge, limits.max_edge, FilterType::Triangle)
    } else {
        img
    };
    let (out_mime, data) = match encode(&img, format) {
        Ok(v) => v,
        Err(e) => return Outcome::NotSent(format!("encoding failed: {e}")),
    };
    if data.len() as u64 > limits.max_bytes {
        return Outcome::NotSent(format!(
            "{} bytes at {}x{}, over images.max_bytes ({})",
            data.len(),
            img.width(),
            img.height(),
            limits.max_bytes
        ));
    }
    let to = (img.width(), img.height());
    Outcome::Sent(Sent {
        mime: out_mime,
        data,
        pixels: to,
        scaled_from: (to != from).then_some(from),
    })
}

/// A photo stays JPEG; everything else becomes PNG (lossless, what screenshots want).
fn encode(
    img: &DynamicImage,
    source: ImageFormat,
) -> Result<(&'static str, Vec<u8>), image::ImageError> {
    let mut out = Cursor::new(Vec::new());
    if source == ImageFormat::Jpeg {
        img.to_rgb8().write_to(&mut out, ImageFormat::Jpeg)?;
        Ok(("image/jpeg", out.into_inner()))
    } else {
        img.write_to(&mut out, ImageFormat::Png)?;
        Ok(("image/png", out.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logo() -> Vec<u8> {
        std::fs::read("/usr/share/pixmaps/debian-logo.png").expect("debian-logo.png")
    }

    #[test]
    fn small_images_go_as_they_are() {
        let png = logo();
        let Outcome::Sent(s) = prepare("image/png", png.clone(), ImageLimits::default()) else {
            panic!("not sent")
        };
        assert_eq!(
            (s.mime, s.pixels, s.scaled_from),
            ("image/png", (48, 48), None)
        );
        assert_eq!(s.data, png);
    }

    #[test]
    fn large_ones_are_scaled_to_the_long_edge() {
        let limits = ImageLimits {
            max_edge: 20,
            ..ImageLimits::default()
        };
        let Outcome::Sent(s) = prepare("image/png", logo(), limits) else {
            panic!("not sent")
        };
        assert_eq!((s.pixels, s.scaled_from), ((20, 20), Some((48, 48))));
        assert_eq!(
            imagesize::blob_size(&s.data).map(|d| d.width).ok(),
            Some(20)
        );
        assert_eq!(
            Outcome::Sent(s).line(),
            format!("sent image/png 20x20 {}B scaled from 48x48", {
                let Outcome::Sent(again) = prepare("image/png", logo(), limits) else {
                    panic!()
                };
                again.data.len()
            })
        );
    }

    #[test]
    fn the_byte_cap_refuses_by_name() {
        let limits = ImageLimits {
            max_edge: 1568,
            max_bytes: 100,
        };
        let Outcome::NotSent(why) = prepare("image/png", logo(), limits) else {
            panic!("sent")
        };
        assert!(why.ends_with("over images.max_bytes (100)"), "{why}");
        assert!(matches!(
            prepare("image/svg+xml", b"<svg/>".to_vec(), limits),
            Outcome::NotSent(_)
        ));
    }
}
