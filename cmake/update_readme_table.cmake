# cmake -DTABLE=accuracy.md -DREADME=scenarios/README.md -P update_readme_table.cmake
# Replaces the lines between "<!-- validate:begin -->" and "<!-- validate:end -->" in README with
# the contents of TABLE (trainsim validate's accuracy.md), so the accuracy table there is that
# command's output and nothing else.
file(READ "${TABLE}" table)
file(READ "${README}" readme)
string(FIND "${readme}" "<!-- validate:begin -->\n" begin)
string(FIND "${readme}" "<!-- validate:end -->" end)
if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "${README}: no <!-- validate:begin --> … <!-- validate:end --> block")
endif()
string(LENGTH "<!-- validate:begin -->\n" marker)
math(EXPR keep "${begin} + ${marker}")
string(SUBSTRING "${readme}" 0 ${keep} head)
string(SUBSTRING "${readme}" ${end} -1 tail)
file(WRITE "${README}" "${head}${table}${tail}")
message(STATUS "${README}: accuracy table replaced by ${TABLE}")
