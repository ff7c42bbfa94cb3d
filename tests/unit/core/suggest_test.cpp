#include <gtest/gtest.h>

#include "trainsim/core/suggest.hpp"

TEST(Suggest, EditDistance) {
  EXPECT_EQ(trainsim::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(trainsim::edit_distance("", "abc"), 3u);
}

TEST(Suggest, NearestIsCaseInsensitiveAndBounded) {
  EXPECT_EQ(trainsim::nearest_name("RESNET50", {"resnet50", "vgg16"}), "resnet50");
  EXPECT_EQ(trainsim::nearest_name("resnt50", {"resnet50", "resnet101"}), "resnet50");
  EXPECT_FALSE(trainsim::nearest_name("transformer", {"resnet50", "vgg16"}).has_value());
}

TEST(Suggest, MessageListsChoicesWhenNothingIsClose) {
  EXPECT_EQ(trainsim::unknown_name_message("model", "zzz", {"a1", "b2"}), "unknown model 'zzz'; expected one of a1, b2");
}
