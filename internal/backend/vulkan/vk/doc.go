// Package vk binds the part of the Vulkan API that qd's Vulkan backend uses
// — instances, physical-device queries, logical devices and queues, buffers
// and memory, compute pipelines, command buffers, timeline semaphores and
// timestamp queries — through purego, so that binaries build with
// CGO_ENABLED=0 and run where no Vulkan loader is installed (Open then
// says so).
//
// Every structure is passed by pointer, as Vulkan's compute calls take
// them, which keeps clear of purego's by-value structure limits. Functions
// are resolved through vkGetInstanceProcAddr and vkGetDeviceProcAddr, as
// the loader documents, so a device call goes straight to its driver.
//
// The package is a thin layer: it knows Vulkan's types and calls, not qd's
// streams or kernels (those are package vulkan, one level up).
package vk
