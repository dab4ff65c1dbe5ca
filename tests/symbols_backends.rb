# Runs the shim's symbol parser both ways over every Ruby file of the given gems and reports
# where Prism (GemdocShim::Symbols.parse, with Prism loadable) and Ripper disagree, as JSON.
#   ruby -I PRISM_LIB tests/symbols_backends.rb SHIM_DIR GEM...
require "json"
require File.expand_path("symbols", ARGV.shift)

symbols = GemdocShim::Symbols
report = { "backend" => symbols.backend, "files" => 0, "records" => 0, "differing" => [] }
ARGV.each do |name|
  root = Gem::Specification.find_by_name(name).full_gem_path
  Dir.glob("**/*.rb", base: root).sort.each do |file|
    source = File.read(File.join(root, file), encoding: "UTF-8").scrub
    ripper = symbols::Collector.new(file, source.lines, symbols::Budget.new(symbols::MAX_OUTPUT))
    symbols::RipperWalker.walk(source, ripper)
    report["files"] += 1
    report["records"] += ripper.records.size
    report["differing"] << "#{name}/#{file}" unless symbols.parse(source, file) == ripper.records
  end
end
puts JSON.generate(report)
