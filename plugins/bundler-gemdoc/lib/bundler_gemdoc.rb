# frozen_string_literal: true

require "json"
require "shellwords"

# Runs `gemdoc hook` for the project Bundler just installed. Runs inside `bundle install`, so it
# never raises and never changes the bundle's exit status: every failure is one `[gemdoc] ` line.
module BundlerGemdoc
  PREFIX = "[gemdoc] "
  DEFAULT_TIMEOUT = 600

  module_function

  def after_install_all
    return unless wanted?

    root = ::Bundler.root.to_s
    return if ci? && !explicitly_trusted?(root)

    run(root, ::Bundler.default_lockfile.to_s)
  rescue Exception => e # rubocop:disable Lint/RescueException -- nothing may escape into Bundler
    say "auto-index skipped (#{e.class}: #{e.message.lines.first.to_s.strip})"
  end

  def wanted?
    ENV["GEMDOC_NO_AUTO_INDEX"] != "1"
  end

  def ci?
    !ENV["CI"].to_s.empty?
  end

  # In CI the hook stays silent unless `gemdoc trust` approved this project on purpose; read
  # from gemdoc's trust file here so that CI spends no process on a project it will not index.
  def explicitly_trusted?(root)
    entry = JSON.parse(File.read(trust_file)).fetch("projects", {})[root]
    entry.is_a?(Hash) && entry["how"] == "explicit"
  rescue StandardError
    false
  end

  def trust_file
    return File.join(ENV["GEMDOC_HOME"], "config", "trusted.json") unless ENV["GEMDOC_HOME"].to_s.empty?

    config = ENV["XDG_CONFIG_HOME"].to_s
    config = File.join(Dir.home, ".config") if config.empty? || !config.start_with?("/")
    File.join(config, "gemdoc", "trusted.json")
  end

  def command
    bin = ENV["GEMDOC_BIN"].to_s
    bin.empty? ? ["gemdoc"] : Shellwords.split(bin)
  end

  def timeout
    Float(ENV.fetch("GEMDOC_HOOK_TIMEOUT", DEFAULT_TIMEOUT))
  rescue ArgumentError
    DEFAULT_TIMEOUT
  end

  # On success gemdoc's own lines (none when there was nothing to do); on failure one line.
  def run(root, lockfile)
    argv = command + ["hook", "--project", root, "--lockfile", lockfile]
    output, status = capture(argv)
    lines = output.lines.map { |l| l.strip.delete_prefix("gemdoc: ") }.reject(&:empty?)
    return lines.each { |line| say line } if status&.success?
    return if status.nil?

    code = status.exitstatus || "on signal #{status.termsig}"
    say(lines.last ? "#{lines.last} (gemdoc hook exited #{code})" : "`gemdoc hook` exited #{code}; run `gemdoc index` in #{root} to see why")
  end

  # Runs gemdoc outside Bundler's environment, with a deadline; SIGTERM lets it keep finished gems.
  def capture(argv)
    reader, writer = IO.pipe
    pid = ::Bundler.with_original_env do
      Process.spawn(*argv, out: writer, err: writer, in: File::NULL, pgroup: true)
    end
    writer.close
    output = Thread.new { reader.read }
    waiter = Process.detach(pid)
    return [output.value, waiter.value] if waiter.join(timeout)

    stop(pid, waiter)
    say "indexing took longer than #{timeout.round} s and was stopped; run `gemdoc index` to finish"
    [output.value, nil]
  rescue Errno::ENOENT
    say "`#{argv.first}` not found on PATH: install gemdoc (pip install gemdoc) or set GEMDOC_BIN"
    ["", nil]
  ensure
    reader&.close
  end

  def stop(pid, waiter)
    Process.kill("TERM", -pid)
    return if waiter.join(10)

    Process.kill("KILL", -pid)
    waiter.join
  rescue Errno::ESRCH
    nil
  end

  def say(message)
    line = PREFIX + message
    ui = ::Bundler.respond_to?(:ui) ? ::Bundler.ui : nil
    ui ? ui.warn(line) : warn(line)
  end
end
