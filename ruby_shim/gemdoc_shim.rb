# frozen_string_literal: true

# gemdoc's Ruby side. Python sends one JSON request on stdin and reads one JSON
# answer on stdout; every fact about gems comes from Ruby itself, never guessed.
#
#   ruby gemdoc_shim.rb locate   # where each locked (name, version) is installed
#   ruby gemdoc_shim.rb extract  # one gem: ri entries (read or generated) + symbols
#   ruby gemdoc_shim.rb mirror   # a file:// gem source holding the Bundler plugin
require "json"
require_relative "symbols"

module GemdocShim
  # Finds the installed directory of exactly the locked version of each gem.
  module Locate
    module_function

    # A gemspec is Ruby. Unless the request says the project is trusted ("evaluate"), no
    # gemspec the project controls (its path: gems, its own bundle path) is loaded: a gem is
    # then found by its file names alone.
    def run(request)
      project = File.expand_path(request.fetch("project"))
      bundle_path = bundler_install_path(project)
      roots = ([bundle_path, vendor_bundle(project)] + Gem.path).compact.uniq
      # nil: every gemspec may be evaluated; else the roots whose gemspecs may not.
      untrusted = request["evaluate"] ? nil : [bundle_path, vendor_bundle(project)].compact - Gem.path
      {
        "ruby" => RUBY_VERSION,
        "roots" => roots,
        "gems" => request.fetch("gems").map { |g| locate(g, project, roots, bundle_path, untrusted) }
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

    def locate(gem, project, roots, bundle_path, untrusted)
      base = {"name" => gem["name"], "version" => gem["version"]}
      found =
        case gem["source"]
        when "path" then path_gem(gem, project, evaluate: untrusted.nil?)
        when "git" then git_gem(gem, bundle_path)
        else installed_gem(gem, roots, untrusted || [])
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
    def installed_gem(gem, roots, untrusted)
      first = nil
      roots.product(["specifications", "specifications/default"]).each do |root, specs|
        file = File.join(root, specs, "#{full_name(gem)}.gemspec")
        next unless File.file?(file)

        found = untrusted.include?(root) ? unevaluated(gem, root) : evaluated(gem, file, root, specs)
        return found if found && found["status"] == "found"

        first ||= found
      end
      first
    end

    def evaluated(gem, file, root, specs)
      spec = Gem::Specification.load(file)
      return nil unless spec && spec.version.to_s == gem["version"]

      describe(spec, root: root, default: specs.end_with?("default")).merge(about(spec))
    end

    ABOUT_CHARS = 1000

    # What the gem says it is for: its summary and description, each cut to ABOUT_CHARS, as valid
    # UTF-8 (a gemspec may hold any bytes, and one bad string must not fail the whole bundle's answer).
    def about(spec)
      text = [spec.summary, spec.description].map { |t| t.to_s.dup.force_encoding(Encoding::UTF_8).scrub("\uFFFD") }
      {"about" => text.map { |t| t.strip[0, ABOUT_CHARS] }.reject(&:empty?).uniq.join("\n")}
    rescue StandardError
      {}
    end

    # An installed gem found by its file names alone, its gemspec not evaluated.
    def unevaluated(gem, root)
      dir = File.join(root, "gems", full_name(gem))
      return nil unless File.directory?(dir) && !Dir.empty?(dir)

      ri_dir = File.join(root, "doc", full_name(gem), "ri")
      {"status" => "found", "dir" => dir, "ri_dir" => (File.file?(File.join(ri_dir, "cache.ri")) ? ri_dir : nil)}
    end

    def describe(spec, root:, default: false)
      doc_dir = File.join(root, "doc", spec.full_name)
      ri_dir = File.join(doc_dir, "ri")
      info = {"ri_dir" => (File.file?(File.join(ri_dir, "cache.ri")) ? ri_dir : nil)}
      info["source_paths"] = spec.source_paths if info["ri_dir"]  # what RubyGems' RDoc hook documented
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

    # Unless it may ``evaluate`` the gemspec (to check its version), the directory holding
    # NAME.gemspec is taken as the gem, as for a git: gem.
    def path_gem(gem, project, evaluate:)
      dir = File.expand_path(gem.fetch("path"), project)
      return nil unless File.directory?(dir)

      spec_file = gemspec_in(dir, gem["name"])
      root = spec_file ? File.dirname(spec_file) : dir
      if no_gem?(root, project, spec_file)
        return {"status" => "refused", "reason" => "its path: holds the project or the home directory, or is /"}
      end
      return {"status" => "found", "dir" => root, "ri_dir" => nil} unless spec_file && evaluate

      spec = Dir.chdir(root) { Gem::Specification.load(spec_file) }
      return nil unless spec && spec.version.to_s == gem["version"]

      {"status" => "found", "dir" => root, "ri_dir" => nil}.merge(about(spec))
    end

    # A lockfile's `remote: ~`, `remote: ..` or `remote: /` names no gem: every document under it
    # would be indexed as one, and shown to any agent asking in this project. The gem's directory
    # (`root`) is no gem when it is `/` or holds the home directory; nor, without the gem's gemspec
    # (`spec_file`), when it holds the project. `remote: .` (a gem's own repository), an example app's
    # `remote: ../..` (the gemspec there) and a monorepo's `path "../.."` (the gemspec below) are gems.
    # Anything that cannot be resolved is no gem either.
    def no_gem?(root, project, spec_file)
      real = File.realpath(root)
      home = home_dir
      return true if real == "/" || (home && "#{home}/".start_with?("#{real}/"))

      inside = File.realpath(project)
      !spec_file && real != inside && inside.start_with?("#{real}/")
    rescue SystemCallError
      true
    end

    def home_dir
      File.realpath(Dir.home)
    rescue ArgumentError, SystemCallError  # no HOME, or one that does not exist (www-data, containers)
      nil
    end

    # NAME.gemspec at the top of ``dir`` or up to two directories below it (a monorepo's gems).
    def gemspec_in(dir, name)
      Dir.glob(File.join(dir, "{,*/,*/*/}#{name}.gemspec")).first
    end

    # Bundler checks git sources out into <bundle_path>/bundler/gems/<repo>-<rev12>.
    def git_gem(gem, bundle_path)
      return nil unless bundle_path && gem["revision"]

      pattern = File.join(bundle_path, "bundler", "gems", "*-#{gem['revision'][0, 12]}")
      Dir.glob(pattern).each do |checkout|
        spec_file = gemspec_in(checkout, gem["name"])
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
      reader =
        if request["ri_dir"]
          RiReader.from_dir(request["ri_dir"])
        else
          readable = request.fetch("readable", sources)
          RiReader.new(generate(root, sources, request.fetch("generate_into"), readable))
        end
      {
        "ri" => reader.entries,
        "symbols" => Symbols.parse_files(root, ruby_files(sources)),
        "parser" => Symbols.backend
      }
    end

    # Same as `rdoc --ri --op OUT SOURCES` run inside the gem directory: RDoc
    # resolves paths against the working directory, and refuses an existing --op.
    # Returns RDoc's in-memory store, which holds exactly what it wrote. The options are
    # gemdoc's alone: a gem's `.rdoc_options` (which `rdoc` would load) could exclude files,
    # or document private methods, in what is cached for every project using that version.
    def generate(root, sources, out, readable)
      Confined.enter(root, readable)
      Dir.chdir(root) do
        rdoc = RDoc::RDoc.new
        options = RDoc::Options.new
        options.parse(["--ri", "--quiet", "--encoding=UTF-8", "--op", out, *sources])
        rdoc.document(options)
        rdoc.store
      end
    end

    def ruby_files(sources)
      sources.select { |f| f.end_with?(".rb") }
    end
  end

  # Besides the sources it is given, RDoc reads the files they name: `# :include: path` and a C
  # method's `/* in other.c */`. A gem is untrusted: only the regular files of `readable` (the gem's
  # sources and prose, which its digest covers and whose sizes gemdoc bounds), inside the gem after
  # symlinks, are read, and at most MAX_INCLUDED bytes of them in all (a file included again and
  # again); any other (`../../secret`, a symlink out, `/dev/zero`) is not found.
  module Confined
    MAX_INCLUDED = 16 * 1024 * 1024
    MAX_INDENT = 40  # RDoc writes the directive's indent before every included line: `#` and 20,000 spaces cost 1.6 GB

    module_function

    def enter(root, readable)
      top = File.realpath(root)
      @allowed = readable.filter_map { |rel| real_inside(File.join(root, rel), top) }.to_h { |real| [real, true] }
      @left = MAX_INCLUDED
      RDoc::Markup::PreProcess.prepend(Includes) unless RDoc::Markup::PreProcess < Includes
      RDoc::Parser::C.prepend(CSources) unless RDoc::Parser::C < CSources
    end

    def real_inside(path, root)
      real = File.realpath(path)
      real if real.start_with?("#{root}/") && File.file?(real)
    rescue SystemCallError
      nil
    end

    # Whether RDoc may read `path`; if so, its size is counted against MAX_INCLUDED: every time for an
    # include (its text is copied in each time), the first time only for a C method's source file
    # (`once`: RDoc reads the file again per method, but takes one body from it).
    def allows?(path, once: false)
      real = File.realpath(path)
      return false unless @allowed.key?(real) && File.file?(real) && File.readable?(real)
      return true if once && @allowed[real] == :read

      size = File.size(real)
      return false if size > @left

      @left -= size
      @allowed[real] = :read if once
      true
    rescue SystemCallError
      false
    end

    module Includes
      def include_file(name, indent, encoding)
        indent.size > MAX_INDENT ? "" : super
      end

      # RDoc's own search (the including file's directory, then the include path), over allowed files only.
      def find_include_file(name)
        paths = [File.dirname(@input_file_name), *@include_path].map { |dir| File.join(dir, name) }
        paths.find { |path| Confined.allows?(path) }
      end
    end

    module CSources
      def handle_method(type, var_name, meth_name, function, param_count, source_file = nil)
        source_file = nil if source_file && !Confined.allows?(File.join(@file_dir, source_file), once: true)
        super
      end
    end
  end

  # Every class, module, method and attribute of an RDoc store, with its comment
  # rendered as Markdown: the store RDoc just generated (in memory), or one
  # read from an ri directory. Both walk what RDoc::Store#save writes.
  class RiReader
    def self.from_dir(dir)
      store = RDoc::RI::Store.new(dir, :gem)
      store.load_cache
      new(store, on_disk: true)
    end

    def initialize(store, on_disk: false)
      @store = store
      @on_disk = on_disk
      @markdown = RDoc::Markup::ToMarkdown.new
    end

    def entries
      classes.sort_by(&:full_name).flat_map { |klass| class_entries(klass) }
    end

    private

    def classes
      return @store.all_classes_and_modules unless @on_disk

      @store.cache[:modules].uniq.filter_map do |name|
        @store.load_class(name)
      rescue StandardError
        nil
      end
    end

    def class_entries(klass)
      [class_entry(klass)] + methods_of(klass) + attributes_of(klass)
    rescue StandardError => e
      warn "gemdoc: ri entry #{klass.full_name} unreadable: #{e.class}"
      []
    end

    def class_entry(klass)
      comment = @on_disk ? klass.comment : klass.parse(klass.comment_location)
      {
        "kind" => klass.type, "full_name" => klass.full_name, "owner" => nil, "name" => klass.name,
        "singleton" => false, "visibility" => "public", "call_seq" => nil, "params" => nil,
        "superclass" => superclass_name(klass),
        "includes" => klass.includes.map(&:name), "comment" => render(comment), "file" => comment_file(comment)
      }
    end

    # A comment part that is only a directive to a tool (`# rubocop:disable Style/Documentation`).
    DIRECTIVE = /\A\s*(?:rubocop|typed|frozen_string_literal|encoding|coding|warn_indent):[^\n]*\z/

    # The file of a class's first comment that says something, where its documentation is: a bare
    # reopening (a test helper's) adds an empty part, a `# rubocop:disable` line a directive. With
    # none, the first file RDoc read it in (a class defined in C keeps its ext/ file).
    def comment_file(comment)
      parts = comment.respond_to?(:parts) ? comment.parts : []
      filed = parts.select { |p| p.respond_to?(:file) && p.file }
      best = filed.find { |p| !p.empty? && !DIRECTIVE.match?(render(p)) } || filed.first
      best && file_name(best.file)
    end

    def superclass_name(klass)
      return nil unless klass.type == "class" && klass.superclass

      sup = klass.superclass
      sup.respond_to?(:full_name) ? sup.full_name : sup.to_s
    end

    def methods_of(klass)
      return klass.method_list.select(&:display?).map { |m| method_entry(m) } unless @on_disk

      name = klass.full_name
      instance = @store.cache[:instance_methods].fetch(name, []).map { |m| "##{m}" }
      singleton = @store.cache[:class_methods].fetch(name, []).map { |m| "::#{m}" }
      (instance + singleton).uniq.filter_map do |key|
        method_entry(@store.load_method(name, key))
      rescue StandardError
        nil
      end
    end

    def method_entry(meth)
      {
        "kind" => "method", "full_name" => meth.full_name, "owner" => meth.parent_name, "name" => meth.name,
        "singleton" => meth.singleton ? true : false, "visibility" => meth.visibility.to_s,
        "call_seq" => meth.call_seq, "params" => meth.params, "comment" => render(meth.comment),
        "file" => file_name(meth.file), "aliases" => meth.aliases.map(&:name)
      }
    end

    def attributes_of(klass)
      klass.attributes.select { |a| @on_disk || a.display? }.map do |attr|
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

      doc = comment.respond_to?(:parse) ? comment.parse : comment
      doc = RDoc::Markup.parse(doc.to_s) unless doc.is_a?(RDoc::Markup::Document)
      cross_references(doc.accept(@markdown).strip)
    rescue StandardError
      comment.to_s.strip
    end

    # ToMarkdown writes a cross-reference as a link to "rdoc-ref:Target", which no reader
    # follows, hard-wrapped inside the target too ("#establis\nh_connection"), or leaves RDoc's own
    # "{label}[rdoc-ref:Target]" as it is: "[match](rdoc-ref:Base#match)" reads as "Base#match",
    # "{its docs}[rdoc-ref:Mail]" as "its docs (Mail)", and a label that is a name itself
    # ("[Base.establish_connection](rdoc-ref:ConnectionHandling#establish_connection)") as that name.
    CROSS_REFERENCE = /\[([^\]]*)\]\(rdoc-ref:([^)]+)\)|\{([^}]*)\}\[rdoc-ref:([^\]]+)\]/

    def cross_references(text)
      text.gsub(CROSS_REFERENCE) do
        match = Regexp.last_match
        label, target = (match[1] || match[3]).gsub(/\s+/, " "), (match[2] || match[4]).gsub(/\s+/, "")
        next target if target.end_with?(label)

        label.include?(" ") ? "#{label} (#{target})" : label
      end
    end
  end

  def self.main(argv)
    request = JSON.parse($stdin.read)
    result =
      case argv.first
      when "locate" then Locate.run(request)
      when "extract" then Extract.run(request)
      when "mirror"
        require_relative "mirror"
        Mirror.run(request)
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
