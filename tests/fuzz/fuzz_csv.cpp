// libFuzzer target: the CSV reader (CsvTable::parse) and its numeric cells.
#include "fuzz_input.hpp"
#include "trainsim/core/csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return trainsim_fuzz::read_text(data, size, [](const std::string& text) {
    const trainsim::CsvTable table = trainsim::CsvTable::parse(text, "fuzz-input/input.csv");
    for (std::size_t row = 0; row < table.row_count(); ++row)
      for (std::size_t column = 0; column < table.columns().size(); ++column) {
        try {
          (void)table.number(row, column);
        } catch (const trainsim::InputError&) {
        }
      }
  });
}
