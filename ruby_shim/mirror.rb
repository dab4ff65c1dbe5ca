# frozen_string_literal: true

require "fileutils"
require "rubygems/package"
require "zlib"

module GemdocShim
  # Builds a one-gem RubyGems source in a directory, so `bundle plugin install --source=file://DIR`
  # installs gemdoc's plugin offline. Written here rather than by `gem generate_index`, which
  # RubyGems 3.5 moved into a gem that it would fetch from rubygems.org.
  module Mirror
    module_function

    def run(request)
      plugin = File.expand_path(request.fetch("plugin"))
      out = File.expand_path(request.fetch("out"))
      spec = Dir.chdir(plugin) { Gem::Specification.load(Dir["*.gemspec"].first) }
      FileUtils.mkdir_p(File.join(out, "gems"))
      FileUtils.mkdir_p(File.join(out, "quick", "Marshal.4.8"))
      build(spec, plugin, out)
      index(spec, out)
      { "name" => spec.name, "version" => spec.version.to_s }
    end

    # Writes the .gem straight into the mirror: the plugin's own directory may be read-only.
    def build(spec, plugin, out)
      target = File.join(out, "gems", "#{spec.full_name}.gem")
      Gem::DefaultUserInteraction.use_ui(Gem::SilentUI.new) do
        Dir.chdir(plugin) { Gem::Package.build(spec, true, false, target) }
      end
    end

    def index(spec, out)
      tuple = [[spec.name, spec.version, spec.platform.to_s]]
      gzip(File.join(out, "specs.4.8.gz"), tuple)
      gzip(File.join(out, "latest_specs.4.8.gz"), tuple)
      gzip(File.join(out, "prerelease_specs.4.8.gz"), [])
      quick = File.join(out, "quick", "Marshal.4.8", "#{spec.full_name}.gemspec.rz")
      File.binwrite(quick, Zlib::Deflate.deflate(Marshal.dump(spec)))
    end

    def gzip(path, value)
      Zlib::GzipWriter.open(path) { |gz| gz.write(Marshal.dump(value)) }
    end
  end
end
