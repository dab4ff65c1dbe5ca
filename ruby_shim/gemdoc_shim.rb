# frozen_string_literal: true

# gemdoc's Ruby side. Python sends one JSON request on stdin and reads one JSON
# answer on stdout; every fact about gems comes from Ruby itself, never guessed.
#
#   ruby gemdoc_shim.rb locate   # where each locked (name, version) is installed
#   ruby gemdoc_shim.rb extract  # one gem: ri entries (read or generated) + symbols
require "json"
require_relative "symbols"

module GemdocShim
  # Finds the installed directory of exactly the locked version of each gem.
  module Locate
    module_function

    def run(request)
      project = File.expand_path(request.fetch("project"))
      bundle_path = bundler_install_path(project)
      roots = ([bundle_path, vendor_bundle(project)] + Gem.path).compact.uniq
      {
        "ruby" => RUBY_VERSION,
        "roots" => roots,
        "gems" => request.fetch("gems").map { |g| locate(g, project, roots, bundle_path) }
      }
    end

    # Bundler's configured install path (BUNDLE_PATH, .bundle/config), if any.
    def bundler_install_path(project)
      gemfile = File.join(project, "Gemfile")
      return nil unless File.exist?(gemfile)

      ENV["BUNDLE_GEMFILE"] = gemfile
      Dir.chdir(project) do
        require "bundler"
        Bundler.bundle_path.to_s
      end
    rescue StandardError, LoadError
      nil
    end

    def vendor_bundle(project)
      Dir.glob(File.join(project, "vendor", "bundle", "ruby", "*")).first
    end

    def locate(gem, project, roots, bundle_path)
      base = {"name" => gem["name"], "version" => gem["version"]}
      found =
        case gem["source"]
        when "path" then path_gem(gem, project)
        when "git" then git_gem(gem, bundle_path)
        else installed_gem(gem, roots)
        end
      base.merge(found || {"status" => "missing"})
    rescue StandardError, ScriptError => e
      base.merge("status" => "error", "reason" => "#{e.class}: #{e.message}")
    end

    def full_name(gem)
      [gem["name"], gem["version"], gem["platform"]].compact.join("-")
    end

    # The first copy of exactly this version whose files are on disk; the same
    # version can be registered twice (a default-gem stub and Debian's copy).
    def installed_gem(gem, roots)
      first = nil
      roots.product(["specifications", "specifications/default"]).each do |root, specs|
        file = File.join(root, specs, "#{full_name(gem)}.gemspec")
        next unless File.file?(file)

        spec = Gem::Specification.load(file)
        next unless spec && spec.version.to_s == gem["version"]

        found = describe(spec, root: root, default: specs.end_with?("default"))
        return found if found["status"] == "found"

        first ||= found
      end
      first
    end

    def describe(spec, root:, default: false)
      doc_dir = File.join(root, "doc", spec.full_name)
      ri_dir = File.join(doc_dir, "ri")
      info = {"ri_dir" => (File.file?(File.join(ri_dir, "cache.ri")) ? ri_dir : nil), "spec" => spec.loaded_from}
      dir = spec.full_gem_path
      return info.merge("status" => "found", "dir" => dir) if %w[lib ext].any? { |d| File.directory?(File.join(dir, d)) }

      found = scattered(spec, info, default)
      return found if found["status"] == "found" && !found["files"].empty?
      return info.merge("status" => "found", "dir" => dir) if File.directory?(dir) && !Dir.empty?(dir)

      found
    end

    # Debian's ruby-* packages and Ruby's default gems keep a gemspec whose
    # gem directory does not exist; the code sits in vendor_ruby or rubylibdir.
    def scattered(spec, info, default)
      libs = spec.files.filter_map { |f| f.delete_prefix("lib/") if f.end_with?(".rb") && !f.start_with?("test/", "spec/", "ext/") }
      dirs = RbConfig::CONFIG.values_at("vendordir", "rubylibdir", "sitelibdir").compact.uniq
      layout = default ? "default gem" : "Debian vendor_ruby"
      # A gem of compiled code only (io-wait, strscan) is installed, with no Ruby to document.
      return info.merge("status" => "found", "dir" => dirs.first, "files" => [], "layout" => layout) if libs.empty?

      best = dirs.map { |d| [d, libs.count { |f| File.file?(File.join(d, f)) }] }.max_by(&:last)
      return info.merge("status" => "missing", "reason" => "gemspec found but its files are not on disk") if best.last.zero?

      files = libs.select { |f| File.file?(File.join(best.first, f)) }
      info.merge("status" => "found", "dir" => best.first, "files" => files, "layout" => layout)
    end

    def path_gem(gem, project)
      dir = File.expand_path(gem.fetch("path"), project)
      return nil unless File.directory?(dir)

      spec_file = Dir.glob(File.join(dir, "{,*/,*/*/}#{gem['name']}.gemspec")).first
      return {"status" => "found", "dir" => dir, "ri_dir" => nil} unless spec_file

      spec = Dir.chdir(File.dirname(spec_file)) { Gem::Specification.load(spec_file) }
      return nil unless spec && spec.version.to_s == gem["version"]

      {"status" => "found", "dir" => File.dirname(spec_file), "ri_dir" => nil}
    end

    # Bundler checks git sources out into <bundle_path>/bundler/gems/<repo>-<rev12>.
    def git_gem(gem, bundle_path)
      return nil unless bundle_path && gem["revision"]

      pattern = File.join(bundle_path, "bundler", "gems", "*-#{gem['revision'][0, 12]}")
      Dir.glob(pattern).each do |checkout|
        spec_file = Dir.glob(File.join(checkout, "{,*/,*/*/}#{gem['name']}.gemspec")).first
        return {"status" => "found", "dir" => File.dirname(spec_file), "ri_dir" => nil} if spec_file
      end
      nil
    end
  end

  # Turns one gem into ri entries and symbols.
  module Extract
    module_function

    def run(request)
      require "rdoc"
      root = request.fetch("root")
      sources = request.fetch("sources")
      ri_dir = request["ri_dir"] || generate(root, sources, request.fetch("generate_into"))
      {
        "ri" => RiReader.new(ri_dir).entries,
        "symbols" => Symbols.parse_files(root, ruby_files(root, sources)),
        "parser" => Symbols.backend,
        "ri_dir" => ri_dir
      }
    end

    # Same as `rdoc --ri --op OUT SOURCES` run inside the gem directory: RDoc
    # resolves paths against the working directory, and refuses an existing --op.
    def generate(root, sources, out)
      Dir.chdir(root) do
        RDoc::RDoc.new.document(["--ri", "--quiet", "--encoding=UTF-8", "--op", out, *sources])
      end
      out
    end

    def ruby_files(root, sources)
      sources.flat_map do |src|
        path = File.join(root, src)
        if File.directory?(path)
          Dir.glob("**/*.rb", base: path).map { |f| File.join(src, f) }
        else
          src.end_with?(".rb") ? [src] : []
        end
      end.sort
    end
  end

  # Reads an ri store: every class, module, method and attribute with its
  # comment rendered as Markdown.
  class RiReader
    def initialize(dir)
      @store = RDoc::RI::Store.new(dir, :gem)
      @store.load_cache
      @markdown = RDoc::Markup::ToMarkdown.new
    end

    def entries
      @store.cache[:modules].sort.flat_map { |name| class_entries(name) }
    end

    private

    def class_entries(name)
      klass = @store.load_class(name)
      [class_entry(klass)] + methods_of(name) + attributes_of(klass)
    rescue StandardError => e
      warn "gemdoc: ri entry #{name} unreadable: #{e.class}"
      []
    end

    def class_entry(klass)
      parts = klass.comment.respond_to?(:parts) ? klass.comment.parts : []
      files = parts.filter_map { |p| file_name(p.file) if p.respond_to?(:file) }
      {
        "kind" => klass.type, "full_name" => klass.full_name, "owner" => nil, "name" => klass.name,
        "singleton" => false, "visibility" => "public", "call_seq" => nil, "params" => nil,
        "superclass" => superclass_name(klass),
        "includes" => klass.includes.map(&:name), "comment" => render(klass.comment), "file" => files.first
      }
    end

    def superclass_name(klass)
      return nil unless klass.type == "class" && klass.superclass

      sup = klass.superclass
      sup.respond_to?(:full_name) ? sup.full_name : sup.to_s
    end

    def methods_of(name)
      instance = @store.cache[:instance_methods].fetch(name, []).map { |m| "##{m}" }
      singleton = @store.cache[:class_methods].fetch(name, []).map { |m| "::#{m}" }
      (instance + singleton).filter_map { |m| method_entry(name, m) }
    end

    def method_entry(owner, key)
      meth = @store.load_method(owner, key)
      {
        "kind" => "method", "full_name" => meth.full_name, "owner" => owner, "name" => meth.name,
        "singleton" => meth.singleton ? true : false, "visibility" => meth.visibility.to_s,
        "call_seq" => meth.call_seq, "params" => meth.params, "comment" => render(meth.comment),
        "file" => file_name(meth.file), "aliases" => meth.aliases.map(&:name)
      }
    rescue StandardError
      nil
    end

    def attributes_of(klass)
      klass.attributes.map do |attr|
        {
          "kind" => "attribute", "full_name" => attr.full_name, "owner" => klass.full_name,
          "name" => attr.name, "singleton" => attr.singleton ? true : false,
          "visibility" => attr.visibility.to_s, "call_seq" => nil, "params" => nil,
          "rw" => attr.rw, "comment" => render(attr.comment), "file" => file_name(attr.file)
        }
      end
    end

    def file_name(file)
      return nil if file.nil?

      file.respond_to?(:relative_name) ? file.relative_name : file.to_s
    end

    def render(comment)
      return "" if comment.nil?

      doc = comment.is_a?(RDoc::Markup::Document) ? comment : RDoc::Markup.parse(comment.to_s)
      doc.accept(@markdown).strip
    rescue StandardError
      comment.to_s.strip
    end
  end

  def self.main(argv)
    request = JSON.parse($stdin.read)
    result =
      case argv.first
      when "locate" then Locate.run(request)
      when "extract" then Extract.run(request)
      else raise ArgumentError, "unknown command #{argv.first.inspect}"
      end
    $stdout.write(JSON.generate(result))
    0
  rescue SystemStackError, StandardError, ScriptError => e
    # SystemStackError is not a StandardError; it is named so RDoc recursing
    # on a symlink loop becomes a reported failure, not a half-written store.
    $stdout.write(JSON.generate("error" => "#{e.class}: #{e.message.to_s[0, 300]}"))
    3
  end
end

exit(GemdocShim.main(ARGV)) if $PROGRAM_NAME == __FILE__
