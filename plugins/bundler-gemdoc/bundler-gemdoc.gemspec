# The Bundler plugin that keeps gemdoc's index in step with Gemfile.lock.
Gem::Specification.new do |spec|
  spec.name = "bundler-gemdoc"
  spec.version = "0.1.0"
  spec.summary = "Bundler plugin: runs `gemdoc hook` after bundle install, add and update"
  spec.description = "Indexes the documentation of newly locked gem versions with gemdoc (a local, offline " \
                     "documentation search). Runs only in projects you trusted; never fails the bundle."
  spec.authors = ["gemdoc"]
  spec.license = "MIT"
  spec.files = ["plugins.rb", "lib/bundler_gemdoc.rb"]
  spec.require_paths = ["lib"]
  spec.required_ruby_version = ">= 2.7"
end
