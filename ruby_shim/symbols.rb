# frozen_string_literal: true

# Every class, module and method definition in a gem's Ruby source, with
# file:line. Prism where `require "prism"` works (Ruby 3.3+), Ripper otherwise;
# both produce the same records:
#   {kind, owner, name, singleton, file, line, end_line, signature}, and for a method
#   defined on a constant (`def Field.build`, or inside `class << Field`) the namespaces open where
#   it is written, `scope`; for a module function (a `def` after a bare `module_function`, or one it
#   names: `module_function :escape`, `module_function def escape`), `module_function: true`; and
#   `private: true` where the source makes the method private as gemdoc shows it: a module function
#   a later `private_class_method :name` names (its module method), or an alias of a module function
#   (`alias h html_escape`: Ruby's alias copies the private instance method)
require "json"
require "ripper"

module GemdocShim
  module Symbols
    ATTR_CALLS = %w[attr_reader attr_writer attr_accessor attr].freeze
    # Calls whose every static name argument is a method they define; `alias_method` defines its first.
    DEFINERS = [*ATTR_CALLS, "define_method", "alias_method"].freeze
    # Called bare, each ends the module_function mode of the namespace body it is written in.
    VISIBILITIES = %w[public private protected].freeze
    # A gem's files are untrusted, and each record repeats its owner's full name, its file's and its line (and, for a
    # method on a constant, the namespaces open there): bounds on those and on the bytes of one gem's records keep a
    # small file (hundreds of nested modules, one name given an `attr_reader` 100,000 times) from making gigabytes
    # of output. Real gems stay far below them (owners of 91 characters and 1.8 MB of records at most on the
    # benchmark bundle).
    MAX_NAME = 256  # an owner's full name; nothing in a namespace of a longer one is recorded
    MAX_SCOPE = 1024  # characters of the namespaces open where a method on a constant is defined; else no record
    MAX_OUTPUT = 16 * 1024 * 1024  # bytes of one gem's records: what does not fit, and the files after, are not read

    module_function

    def backend
      @backend ||= begin
        require "prism"
        "prism"
      rescue LoadError
        "ripper"
      end
    end

    def parse_files(root, files)
      budget = Budget.new(MAX_OUTPUT)
      files.flat_map do |file|
        next [] if budget.spent?

        source = File.read(File.join(root, file), encoding: "UTF-8").scrub
        parse(source, file, budget)
      rescue StandardError, SystemStackError
        []
      end
    end

    def parse(source, file, budget = Budget.new(MAX_OUTPUT))
      lines = source.lines
      collector = Collector.new(file, lines, budget)
      backend == "prism" ? PrismWalker.new(collector).visit(Prism.parse(source).value) : RipperWalker.walk(source, collector)
      collector.records
    end

    # The bytes a gem's records may still take, shared by the collectors of its files; spent at the first that
    # does not fit.
    class Budget
      def initialize(bytes)
        @left = bytes
      end

      def spent?
        @left.zero?
      end

      # Whether `bytes` more fit; they are taken if so, and nothing fits after the first that does not.
      def take(bytes)
        fits = bytes <= @left
        @left = fits ? @left - bytes : 0
        fits
      end
    end

    # Shared by both backends so the output format cannot differ.
    class Collector
      attr_reader :records

      def initialize(file, lines, budget)
        @file = file
        @budget = budget
        @lines = lines
        @records = []
        @namespace = []
        @instance_methods = Hash.new { |h, k| h[k] = [] }  # [owner, name] => its instance method records
        @marked = Hash.new(0)  # [owner, name] => how many of those a `module_function :name` has marked
        @privatized = Hash.new(0)  # ...and a `private_class_method :name` has looked at
        @signatures = {}  # by line: `attr_reader` with thousands of names on one line reads it once
        @blocks = 0
      end

      def in_namespace(name)
        @namespace.push(qualified(name))
        outer, @singleton_of = @singleton_of, nil
        mode, @module_function = @module_function, false
        blocks, @blocks = @blocks, 0  # a namespace opened in a block has a body of its own
        yield
      ensure
        @singleton_of = outer
        @blocks = blocks
        @module_function = mode
        @namespace.pop
      end

      # A block's body is read as a scope of its own, as the blocks gems call these in run (`Module.new do … end`,
      # `Struct.new(:x) { private }`, `class_methods do`; a lambda runs when called, if ever): what it calls bare
      # changes no mode of the body around it, nor makes a module function. (`[1].each { private }` would.)
      def in_block
        @blocks += 1
        mode, @module_function = @module_function, false
        yield
      ensure
        @module_function = mode
        @blocks -= 1
      end

      # A bare `module_function`, `public`, `private` or `protected` in a namespace body (not in a `class << self`
      # in it): Ruby makes each `def` after a bare `module_function` a module function, until a bare visibility call.
      def bare_call(name)
        return unless @blocks.zero? && (name == "module_function" || VISIBILITIES.include?(name))

        @module_function = name == "module_function"
      end

      # `module_function :escape` names instance methods defined before it; `module_function def escape`
      # the one its argument defines (`defined`). A name marks the methods defined since it was last named.
      def module_functions(names, defined)
        return unless @blocks.zero?

        names.uniq.each do |name|
          found = @instance_methods[[owner, name]]
          found.drop(@marked[[owner, name]]).each { |rec| module_function!(rec) }
          @marked[[owner, name]] = found.size
        end
        defined.each { |rec| module_function!(rec) if rec["owner"] == owner && !rec["singleton"] }
      end

      # `private_class_method :helper` after `module_function`: the module method `helper` is private too.
      # (It names a `def self.helper` as well, which RDoc itself reads.)
      def private_class_methods(names)
        return unless @blocks.zero?

        names.uniq.each do |name|
          found = @instance_methods[[owner, name]]
          found.drop(@privatized[[owner, name]]).each { |rec| rec["private"] = true if rec["module_function"] }
          @privatized[[owner, name]] = found.size
        end
      end

      # `class << Field`: the methods defined in it are Field's, resolved as a `def Field.build` is.
      def in_singleton_of(receiver)
        outer, @singleton_of = @singleton_of, receiver
        yield
      ensure
        @singleton_of = outer
      end

      def owner
        @namespace.last
      end

      # The full names of the namespaces open here, outermost first: Ruby's lexical scope, which
      # `module Mail::Compact` opens as one (`Mail` is not searched for constants there).
      def nesting
        @namespace.dup
      end

      # The stack holds full names: a nested name extends the innermost one only.
      def qualified(name)
        return name.delete_prefix("::") if name.start_with?("::")

        [@namespace.last, name].compact.join("::")
      end

      def namespace(kind, name, line, end_line)
        full = qualified(name)
        add(kind, full.rpartition("::").first, full.split("::").last, false, line, end_line)
      end

      # A method defined on a constant (`def Field.build`, `receiver`; or inside `class << Field`) is
      # owned by that constant as written; the namespaces open where it is written (`scope`, see
      # nesting) let the reader resolve it as Ruby does (`Mail::Field`).
      # An alias (`copy_of`: the method it copies) of a module function is its private instance copy.
      def method(name, singleton, line, end_line, receiver = nil, copy_of: nil)
        receiver ||= @singleton_of
        scope = nesting if receiver && !receiver.start_with?("::")  # `::Field` is the top level's
        return if scope && scope.sum(&:size) > MAX_SCOPE  # no record rather than one resolved wrongly

        on = receiver&.delete_prefix("::") || owner
        record = add("method", on, name, singleton || !receiver.nil?, line, end_line, scope)
        return unless record
        return record if record["singleton"]

        copied = @instance_methods[[owner, copy_of]].last if copy_of
        record["private"] = true if copied && (copied["module_function"] || copied["private"])
        @instance_methods[[owner, name]] << record
        record
      end

      # A `def`: a module function when written after a bare `module_function` in its namespace's body.
      def definition(name, singleton, line, end_line, receiver = nil)
        record = method(name, singleton, line, end_line, receiver)
        record["module_function"] = true if record && @module_function && !record["singleton"]
      end

      private

      # A module function's module method is public (`module_function :h` of a private alias `h`).
      def module_function!(record)
        record["module_function"] = true
        record.delete("private")
      end

      def add(kind, owner_name, name, singleton, line, end_line, scope = nil)
        owner_name = owner_name.to_s
        return if owner_name.size > MAX_NAME

        record = {
          "kind" => kind, "owner" => owner_name, "name" => name, "singleton" => singleton,
          "file" => @file, "line" => line, "end_line" => end_line, "signature" => signature(line)
        }
        record["scope"] = scope if scope
        return unless @budget.take(JSON.generate(record).bytesize)

        @records << record
        record
      end

      # The definition's own text from its first line, joined with the next
      # lines while parentheses are open (multi-line parameter lists).
      def signature(line)
        @signatures[line] ||= read_signature(line)
      end

      def read_signature(line)
        text = +""
        depth = 0
        @lines[(line - 1)..(line + 4)].to_a.each do |l|
          text << " " unless text.empty?
          text << l.strip
          depth += l.count("(") - l.count(")")
          break if depth <= 0
        end
        text.gsub(/\s+/, " ")[0, 240]
      end
    end

    # Ripper's event parser: each definition event is reduced when its `end`
    # is read, so Ripper#lineno there is the definition's last line.
    class RipperWalker < Ripper::SexpBuilderPP
      def self.walk(source, collector)
        tree = new(source).parse
        visit(tree, collector, false) if tree
      end

      def on_def(name, params, body)
        [:gd_def, token(name), name_line(name), lineno, nil, body]
      end

      def on_defs(target, _period, name, params, body)
        [:gd_def, token(name), name_line(name), lineno, target_name(target) || false, body]
      end

      def on_class(cpath, _superclass, body)
        [:gd_ns, "class", const_name(cpath), name_line(cpath), lineno, body]
      end

      def on_module(cpath, body)
        [:gd_ns, "module", const_name(cpath), name_line(cpath), lineno, body]
      end

      def on_sclass(target, body)
        [:gd_sclass, target_name(target), body]
      end

      # `alias new old` defines `new` on the line it is written, a copy of `old`.
      def on_alias(new_name, old_name)
        line = name_line(new_name)
        name = alias_name(new_name)
        return super unless line && name.is_a?(String)

        [:gd_call, "alias", line, line, [name], alias_name(old_name)]
      end

      def on_command(ident, args)
        name = token(ident)
        definer(name, ident, args) || module_function(name, args) || private_class(name, args) || super
      end

      def on_method_add_arg(call, args)
        return super unless call.is_a?(Array) && call[0] == :fcall
        empty = args.is_a?(Array) && args[0] == :arg_paren && args[1].nil?
        return [:gd_bare, token(call[1]), call[1]] if empty  # `private()`: bare

        definer(token(call[1]), call[1], args) || module_function(token(call[1]), args) ||
          private_class(token(call[1]), args) || super
      end

      # Where the closing parenthesis is: the call's last line.
      def on_arg_paren(args)
        [:arg_paren, args, lineno]
      end

      # A block given to `define_method` is the method's body: the definition ends with it.
      def on_method_add_block(call, block)
        return super unless call.is_a?(Array) && call[0] == :gd_call

        [*call[0..2], lineno, *call[4..]]
      end

      def self.visit(node, col, singleton)
        return unless node.is_a?(Array)

        case node[0]
        when :gd_ns
          col.namespace(node[1], node[2], node[3], node[4])
          col.in_namespace(node[2]) { visit(node[5], col, false) }
        when :gd_def
          _, name, line, end_line, recv, = node
          return if recv == false  # `def obj.name`: an object the source does not name

          col.definition(name, singleton || !recv.nil?, line, end_line, recv == "self" ? nil : recv)
        when :vcall
          col.bare_call(node[1][1]) if !singleton && node[1].is_a?(Array) && node[1][0] == :@ident
        when :gd_bare
          col.bare_call(node[1]) unless singleton
        when :brace_block, :do_block, :lambda
          col.in_block { node.each { |child| visit(child, col, singleton) } }
        when :gd_module_function
          defined = node[2].filter_map do |arg|
            count = col.records.size
            visit(arg, col, singleton)
            col.records.last if arg.is_a?(Array) && arg[0] == :gd_def && col.records.size > count
          end
          col.module_functions(node[1], defined)
        when :gd_private_class_method
          node[2].each { |arg| visit(arg, col, singleton) }
          col.private_class_methods(node[1])
        when :gd_sclass
          return visit(node[2], col, true) if node[1] == "self"
          return unless node[1]  # `class << obj`: an object the source does not name

          col.in_singleton_of(node[1]) { visit(node[2], col, true) }
        when :gd_call
          node[4].each { |n| col.method(n, singleton, node[2], node[3], copy_of: node[5]) }
        else
          node.each { |child| visit(child, col, singleton) }
        end
      end

      private

      def token(node)
        node.is_a?(Array) && node[0].is_a?(Symbol) && node[0].to_s.start_with?("@") ? node[1] : node.to_s
      end

      # The first position found depth-first (the last, from the end): the line a name was written on.
      def name_line(node, from_end: false)
        return nil unless node.is_a?(Array)
        return node[2][0] if node[0].is_a?(Symbol) && node[0].to_s.start_with?("@") && node[2].is_a?(Array)

        (from_end ? node.reverse_each : node.each).each do |child|
          found = name_line(child, from_end: from_end)
          return found if found
        end
        nil
      end

      def const_name(node)
        case node[0]
        when :const_ref, :var_ref, :vcall then token(node[1])
        when :const_path_ref then "#{const_name(node[1])}::#{token(node[2])}"
        when :top_const_ref then "::#{token(node[1])}"
        else token(node)
        end
      end

      # What `class << target` opens, or `def target.name` defines on: "self", a constant's name, or nil for
      # any other object (a local variable, `(expr)`), which the source does not name.
      def target_name(target)
        return nil unless target.is_a?(Array)
        return "self" if target[0] == :var_ref && target[1].is_a?(Array) && target[1][0..1] == [:@kw, "self"]
        return const_name(target) if target[0] == :var_ref && target[1].is_a?(Array) && target[1][0] == :@const

        const_name(target) if %i[const_path_ref top_const_ref].include?(target[0])
      end

      # `attr_reader :a, "b"` and `define_method(:c)`: a call that defines methods, ending on
      # the line of its last argument.
      def definer(name, ident, args)
        return unless DEFINERS.include?(name)

        last = args[0] == :arg_paren ? args[2] : name_line(args, from_end: true) if args.is_a?(Array)
        names = static_names(name == "alias_method" ? arguments(args).first(1) : args)  # a dynamic new name: none
        copied = static_name(arguments(args)[1]) if name == "alias_method"
        [:gd_call, name, name_line(ident), last || name_line(ident), names, copied]
      end

      # `module_function :a, "b"` or `module_function def a`: the names, and the arguments to walk.
      def module_function(name, args)
        [:gd_module_function, static_names(args), arguments(args)] if name == "module_function"
      end

      # `private_class_method :a, "b"`: the names, and the arguments to walk (`private_class_method def self.a`).
      def private_class(name, args)
        [:gd_private_class_method, static_names(args), arguments(args)] if name == "private_class_method"
      end

      # An `alias` operand: a bare name, or a symbol.
      def alias_name(node)
        static_name(node) || (token(node[1]) if node.is_a?(Array) && node[0] == :symbol_literal)
      end

      # The names given as plain symbols or strings; an interpolated name is not known until run time.
      def static_names(args)
        arguments(args).filter_map { |arg| static_name(arg) }
      end

      # A call's argument nodes, each whole (`:a`, a `def`).
      def arguments(args)
        args = args[1] if args.is_a?(Array) && args[0] == :arg_paren
        list = args.is_a?(Array) && args[0] == :args_add_block ? args[1] : args
        list.is_a?(Array) ? list : []
      end

      def static_name(arg)
        return nil unless arg.is_a?(Array)

        case arg[0]
        when :symbol_literal then token(arg[1][1]) if arg[1].is_a?(Array) && arg[1][0] == :symbol
        when :string_literal, :dyna_symbol
          parts = arg[1].is_a?(Array) ? arg[1][1..] : []
          parts[0][1] if parts.size == 1 && parts[0][0] == :@tstring_content
        end
      end
    end

    # The same walk over Prism's tree, for Rubies that ship it.
    class PrismWalker
      # Nodes whose children the walk visits itself, or not at all: a definition inside a
      # method body is made at run time, on an owner the source does not name.
      OWN_WALK = %i[class_node module_node singleton_class_node def_node].freeze
      CONSTANTS = %i[constant_read_node constant_path_node].freeze
      BLOCKS = %i[block_node lambda_node].freeze

      def initialize(collector)
        @col = collector
        @singleton = false
      end

      def visit(node)
        return unless node
        named = node.type == :call_node && node.receiver.nil? ? node.name.to_s : nil
        return module_function(node) if named == "module_function" && node.arguments
        return private_class_method(node) if named == "private_class_method" && node.arguments
        return call(node) if DEFINERS.include?(named)  # a block given is a method body: run later, on an owner unnamed
        return @col.in_block { node.compact_child_nodes.each { |child| visit(child) } } if BLOCKS.include?(node.type)

        case node.type
        when :class_node, :module_node then namespace(node)
        when :def_node then definition(node)
        when :singleton_class_node then singleton_class(node)
        when :call_node then call(node)
        when :alias_method_node then aliased(node)
        end
        node.compact_child_nodes.each { |child| visit(child) } unless OWN_WALK.include?(node.type)
      end

      private

      def namespace(node)
        name = node.constant_path.slice
        kind = node.type == :class_node ? "class" : "module"
        @col.namespace(kind, name, node.location.start_line, node.location.end_line)
        outer = @singleton
        @singleton = false
        @col.in_namespace(name) { visit(node.body) }
        @singleton = outer
      end

      def definition(node)
        recv = node.receiver
        return unless recv.nil? || recv.type == :self_node || CONSTANTS.include?(recv.type)  # `def obj.name`

        @col.definition(node.name.to_s, @singleton || !recv.nil?, node.location.start_line, node.location.end_line,
                        recv && recv.type != :self_node ? recv.slice : nil)
      end

      # `module_function :a, "b"` or `module_function def a`, as the Ripper walk reads it.
      def module_function(node)
        defined = node.arguments.arguments.filter_map do |arg|
          count = @col.records.size
          visit(arg)
          @col.records.last if arg.type == :def_node && @col.records.size > count
        end
        names = node.arguments.arguments.filter_map { |arg| arg.unescaped if arg.respond_to?(:unescaped) }
        @col.module_functions(names, defined)
      end

      # `private_class_method :a, "b"`, as the Ripper walk reads it.
      def private_class_method(node)
        args = node.arguments.arguments
        args.each { |arg| visit(arg) }
        @col.private_class_methods(args.filter_map { |arg| arg.unescaped if arg.respond_to?(:unescaped) })
      end

      # `class << self`, `class << Field` (Field's), or any other object, which the source does not name.
      def singleton_class(node)
        outer = @singleton
        constant = CONSTANTS.include?(node.expression.type)
        @singleton ||= constant || node.expression.type == :self_node
        if constant
          @col.in_singleton_of(node.expression.slice) { visit(node.body) }
        elsif node.expression.type == :self_node
          visit(node.body)
        end
        @singleton = outer
      end

      def call(node)
        name = node.name.to_s
        if node.receiver.nil? && node.arguments.nil? && node.block.nil?  # `private`, `module_function()`
          @col.bare_call(name) unless @singleton
          return
        end
        return unless node.receiver.nil? && DEFINERS.include?(name)

        all = node.arguments&.arguments || []
        args = name == "alias_method" ? all.first(1) : all
        copied = all[1].unescaped if name == "alias_method" && all[1].respond_to?(:unescaped)
        args.each do |arg|
          value = arg.respond_to?(:unescaped) ? arg.unescaped : nil
          @col.method(value, @singleton, node.location.start_line, node.location.end_line, copy_of: copied) if value
        end
      end

      # `alias new old` defines `new` on the line it is written.
      def aliased(node)
        name = node.new_name
        return unless name.respond_to?(:unescaped)

        line = name.location.start_line
        old = node.old_name
        @col.method(name.unescaped, @singleton, line, line, copy_of: (old.unescaped if old.respond_to?(:unescaped)))
      end
    end
  end
end
