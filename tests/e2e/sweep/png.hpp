#pragma once
// Minimal PNG reader for screenshot checks: 8-bit RGB/RGBA, non-interlaced (what Chromium writes).
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim_test {

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;                 ///< 3 (RGB) or 4 (RGBA)
  std::vector<std::uint8_t> pixels;  ///< row-major, channels bytes per pixel
};

/// Decodes a PNG file; throws std::runtime_error for anything else.
Image read_png(const std::string& path);

}  // namespace trainsim_test
