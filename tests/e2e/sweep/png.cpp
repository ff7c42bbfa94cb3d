#include "png.hpp"

#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace trainsim_test {

namespace {
std::uint32_t be32(const std::uint8_t* p) { return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3]; }

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
}
}  // namespace

Image read_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const std::uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
  if (file.size() < 8 || !std::equal(signature, signature + 8, file.begin())) throw std::runtime_error(path + ": not a PNG");
  Image image;
  std::vector<std::uint8_t> compressed;
  for (std::size_t at = 8; at + 8 <= file.size();) {
    const std::uint32_t length = be32(&file[at]);
    const std::string type(file.begin() + at + 4, file.begin() + at + 8);
    const std::uint8_t* data = &file[at + 8];
    if (type == "IHDR") {
      image.width = static_cast<int>(be32(data));
      image.height = static_cast<int>(be32(data + 4));
      const int depth = data[8], colour = data[9], interlace = data[12];
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) throw std::runtime_error(path + ": unsupported PNG format");
      image.channels = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      compressed.insert(compressed.end(), data, data + length);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  const std::size_t stride = static_cast<std::size_t>(image.width) * image.channels;
  std::vector<std::uint8_t> raw((stride + 1) * image.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, compressed.data(), compressed.size()) != Z_OK || raw_size != raw.size())
    throw std::runtime_error(path + ": corrupt image data");
  image.pixels.resize(stride * image.height);
  const int bpp = image.channels;
  for (int y = 0; y < image.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    const std::uint8_t* src = &raw[y * (stride + 1) + 1];
    std::uint8_t* row = &image.pixels[y * stride];
    const std::uint8_t* up = y > 0 ? &image.pixels[(y - 1) * stride] : nullptr;
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= static_cast<std::size_t>(bpp) ? row[x - bpp] : 0;
      const int b = up ? up[x] : 0;
      const int c = (up && x >= static_cast<std::size_t>(bpp)) ? up[x - bpp] : 0;
      int predictor = 0;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) / 2; break;
        case 4: predictor = paeth(a, b, c); break;
        default: throw std::runtime_error(path + ": bad filter");
      }
      row[x] = static_cast<std::uint8_t>(src[x] + predictor);
    }
  }
  return image;
}

}  // namespace trainsim_test
