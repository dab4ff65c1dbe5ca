# frozen_string_literal: true

# Every class, module and method definition in a gem's Ruby source, with
# file:line. Prism where `require "prism"` works (Ruby 3.3+), Ripper otherwise;
# both produce the same records:
#   {kind, owner, name, singleton, file, line, end_line, signature}, and for a method
#   defined on a constant (`def Field.build`, or inside `class << Field`) the namespaces open where
#   it is written, `scope`
require "ripper"

module GemdocShim
  module Symbols
    ATTR_CALLS = %w[attr_reader attr_writer attr_accessor attr].freeze
    # Calls whose every static name argument is a method they define; `alias_method` defines its first.
    DEFINERS = [*ATTR_CALLS, "define_method", "alias_method"].freeze

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
      files.flat_map do |file|
        source = File.read(File.join(root, file), encoding: "UTF-8").scrub
        parse(source, file)
      rescue StandardError, SystemStackError
        []
      end
    end

    def parse(source, file)
      lines = source.lines
      collector = Collector.new(file, lines)
      backend == "prism" ? PrismWalker.new(collector).visit(Prism.parse(source).value) : RipperWalker.walk(source, collector)
      collector.records
    end

    # Shared by both backends so the output format cannot differ.
    class Collector
      attr_reader :records

      def initialize(file, lines)
        @file = file
        @lines = lines
        @records = []
        @namespace = []
      end

      def in_namespace(name)
        @namespace.push(qualified(name))
        outer, @singleton_of = @singleton_of, nil
        yield
      ensure
        @singleton_of = outer
        @namespace.pop
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
      def method(name, singleton, line, end_line, receiver = nil)
        receiver ||= @singleton_of
        add("method", receiver&.delete_prefix("::") || owner, name, singleton || !receiver.nil?, line, end_line)
        @records.last["scope"] = nesting if receiver && !receiver.start_with?("::")  # `::Field` is the top level's
      end

      private

      def add(kind, owner_name, name, singleton, line, end_line)
        @records << {
          "kind" => kind, "owner" => owner_name.to_s, "name" => name, "singleton" => singleton,
          "file" => @file, "line" => line, "end_line" => end_line, "signature" => signature(line)
        }
      end

      # The definition's own text from its first line, joined with the next
      # lines while parentheses are open (multi-line parameter lists).
      def signature(line)
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
        [:gd_def, token(name), name_line(name), lineno, receiver(target), body]
      end

      def on_class(cpath, _superclass, body)
        [:gd_ns, "class", const_name(cpath), name_line(cpath), lineno, body]
      end

      def on_module(cpath, body)
        [:gd_ns, "module", const_name(cpath), name_line(cpath), lineno, body]
      end

      def on_sclass(target, body)
        [:gd_sclass, sclass_target(target), body]
      end

      # `alias new old` defines `new` on the line it is written.
      def on_alias(new_name, old_name)
        line = name_line(new_name)
        name = static_name(new_name) || (token(new_name[1]) if new_name.is_a?(Array) && new_name[0] == :symbol_literal)
        return super unless line && name.is_a?(String)

        [:gd_call, "alias", line, line, [name]]
      end

      def on_command(ident, args)
        definer(token(ident), ident, args) || super
      end

      def on_method_add_arg(call, args)
        return super unless call.is_a?(Array) && call[0] == :fcall

        definer(token(call[1]), call[1], args) || super
      end

      # Where the closing parenthesis is: the call's last line.
      def on_arg_paren(args)
        [:arg_paren, args, lineno]
      end

      # A block given to `define_method` is the method's body: the definition ends with it.
      def on_method_add_block(call, block)
        return super unless call.is_a?(Array) && call[0] == :gd_call

        [*call[0..2], lineno, call[4]]
      end

      def self.visit(node, col, singleton)
        return unless node.is_a?(Array)

        case node[0]
        when :gd_ns
          col.namespace(node[1], node[2], node[3], node[4])
          col.in_namespace(node[2]) { visit(node[5], col, false) }
        when :gd_def
          _, name, line, end_line, recv, = node
          col.method(name, singleton || !recv.nil?, line, end_line, recv == "self" ? nil : recv)
        when :gd_sclass
          return visit(node[2], col, true) if node[1] == "self"
          return visit(node[2], col, singleton) unless node[1]  # `class << obj`: an object the source does not name

          col.in_singleton_of(node[1]) { visit(node[2], col, true) }
        when :gd_call
          node[4].each { |n| col.method(n, singleton, node[2], node[3]) }
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

      # What `class << target` opens: "self", a constant's name, or nil for any other object.
      def sclass_target(target)
        return nil unless target.is_a?(Array)
        return "self" if target[0] == :var_ref && target[1].is_a?(Array) && target[1][0..1] == [:@kw, "self"]
        return const_name(target) if target[0] == :var_ref && target[1].is_a?(Array) && target[1][0] == :@const

        const_name(target) if %i[const_path_ref top_const_ref].include?(target[0])
      end

      def receiver(target)
        return "self" if target.is_a?(Array) && target.flatten.include?("self")

        const_name(target) if target.is_a?(Array)
      end

      # `attr_reader :a, "b"` and `define_method(:c)`: a call that defines methods, ending on
      # the line of its last argument.
      def definer(name, ident, args)
        return unless DEFINERS.include?(name)

        last = args[0] == :arg_paren ? args[2] : name_line(args, from_end: true) if args.is_a?(Array)
        names = static_names(args)
        [:gd_call, name, name_line(ident), last || name_line(ident), name == "alias_method" ? names.first(1) : names]
      end

      # The names given as plain symbols or strings; an interpolated name is not known until run time.
      def static_names(args)
        args = args[1] if args.is_a?(Array) && args[0] == :arg_paren
        list = args.is_a?(Array) && args[0] == :args_add_block ? args[1] : args
        return [] unless list.is_a?(Array)

        list.filter_map { |arg| static_name(arg) }
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

      def initialize(collector)
        @col = collector
        @singleton = false
      end

      def visit(node)
        return unless node

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
        @col.method(node.name.to_s, @singleton || !recv.nil?, node.location.start_line, node.location.end_line,
                    recv && recv.type != :self_node ? recv.slice : nil)
      end

      # `class << self`, `class << Field` (Field's), or any other object, which the source does not name.
      def singleton_class(node)
        outer = @singleton
        constant = CONSTANTS.include?(node.expression.type)
        @singleton ||= constant || node.expression.type == :self_node
        constant ? @col.in_singleton_of(node.expression.slice) { visit(node.body) } : visit(node.body)
        @singleton = outer
      end

      def call(node)
        name = node.name.to_s
        return unless node.receiver.nil? && DEFINERS.include?(name)

        args = node.arguments&.arguments || []
        args = args.first(1) if name == "alias_method"
        args.each do |arg|
          value = arg.respond_to?(:unescaped) ? arg.unescaped : nil
          @col.method(value, @singleton, node.location.start_line, node.location.end_line) if value
        end
      end

      # `alias new old` defines `new` on the line it is written.
      def aliased(node)
        name = node.new_name
        return unless name.respond_to?(:unescaped)

        line = name.location.start_line
        @col.method(name.unescaped, @singleton, line, line)
      end
    end
  end
end
