# Bundler loads this file from the top of the installed plugin gem. It only registers the hook:
# the logic is in lib/, and every Bundler constant is root-scoped (Bundler wraps this file in an
# anonymous module, where a bare `Bundler::Plugin` can fail to resolve).
require_relative "lib/bundler_gemdoc"

::Bundler::Plugin.add_hook("after-install-all") do |_dependencies|
  ::BundlerGemdoc.after_install_all
end
